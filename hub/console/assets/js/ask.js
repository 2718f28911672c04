// ask shows a small form in a <dialog> (no window.prompt: a page must not
// block) and resolves with its values, or null when cancelled.
import { h } from "./dom.js";

export function ask(title, fields, confirmLabel, danger) {
  return new Promise((resolve) => {
    const inputs = {};
    const err = h("p", { class: "error" });
    const rows = fields.map(f => {
      const el = f.type === "textarea" ? h("textarea", { name: f.name, id: "ask-" + f.name, rows: 3, cols: 60 })
        : h("input", { name: f.name, id: "ask-" + f.name, type: f.type || "text", value: f.value ?? "", size: 50 });
      inputs[f.name] = el;
      return h("p", null, h("label", null, f.label, h("br"), el));
    });
    const dlg = h("dialog", { id: "ask" });
    const done = (v) => { dlg.close(); dlg.remove(); resolve(v); };
    const ok = h("button", { class: danger ? "danger" : "primary", type: "submit", id: "ask-ok" }, confirmLabel);
    const form = h("form", { method: "dialog" }, h("h2", null, title), rows, err,
      h("div", { class: "actions" }, ok, h("button", { type: "button", id: "ask-cancel", onclick: () => done(null) }, "Cancel")));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const out = {};
      for (const f of fields) {
        out[f.name] = inputs[f.name].value;
        if (f.required && !out[f.name].trim()) { err.textContent = f.label + " is required."; return; }
      }
      done(out);
    });
    dlg.append(form);
    document.body.append(dlg);
    dlg.showModal();
    const first = Object.values(inputs)[0];
    if (first) first.focus();
  });
}

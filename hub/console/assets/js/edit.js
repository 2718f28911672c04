// Edit a payload in the browser: the text, a diff against the original
// (one segment a line, escaped) before saving, then POST .../edit. The
// server keeps both versions; only the edit is replayed from then on.
import { h, toast } from "./dom.js";
import { post } from "./api.js";
import { esc } from "./esc.js";


// segmentsOf splits EDIFACT text after each segment terminator (and at
// line breaks) so that a diff reads segment by segment.
export function segmentsOf(text) {
  const out = [];
  let cur = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "?" && i + 1 < text.length) { cur += c + text[++i]; continue; } // EDIFACT release character
    cur += c;
    if (c === "'" || c === "~" || c === "\n") { out.push(cur.replace(/[\r\n]+$/, "")); cur = ""; }
  }
  if (cur.replace(/[\r\n]+$/, "") !== "") out.push(cur.replace(/[\r\n]+$/, ""));
  return out.filter((s, i) => s !== "" || i < out.length - 1);
}

// diff is a line diff by longest common subsequence (payloads are a few
// thousand segments at most in an edit; the table is bounded below).
export function diff(a, b) {
  const n = a.length, m = b.length;
  if (n * m > 25e6) return null;
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push([" ", a[i]]); i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) out.push(["-", a[i++]]);
    else out.push(["+", b[j++]]);
  }
  while (i < n) out.push(["-", a[i++]]);
  while (j < m) out.push(["+", b[j++]]);
  return out;
}

// The text to edit comes decoded from the server in the charset the
// payload's UNB declares (m.text: a Latin-1 UNOC payload as Latin-1), and
// goes back as text: the server encodes it in the charset the edited UNB
// declares, so the saved bytes keep the payload's encoding.
export function editor(e, m) {
  const t = m.text || { text: "", charset: "UTF-8", exact: true };
  const text = t.text;
  const area = h("textarea", { class: "edit", id: "edit-text", spellcheck: "false" });
  area.value = text;
  const reason = h("input", { id: "edit-reason", size: 60, placeholder: "why (in the audit trail)" });
  const diffBox = h("div", { id: "edit-diff" });
  const save = h("button", { class: "primary", id: "edit-save", disabled: true }, "Save edit");
  const preview = h("button", { id: "edit-preview" }, "Show diff");
  area.addEventListener("input", () => { save.disabled = true; diffBox.replaceChildren(); });
  preview.addEventListener("click", () => {
    const d = diff(segmentsOf(text), segmentsOf(area.value));
    if (!d) { diffBox.replaceChildren(h("p", { class: "error" }, "Too large to diff here; use edihub dlq edit.")); return; }
    const changed = d.filter(([k]) => k !== " ").length;
    const rows = d.filter(([k], i) => k !== " " || d.slice(Math.max(0, i - 2), i + 3).some(([x]) => x !== " "));
    diffBox.replaceChildren(h("p", null, changed === 0 ? "No change." : `${changed} segment lines changed:`),
      h("table", { class: "diff" }, h("tbody", null, rows.map(([k, s]) => h("tr", { class: k === "-" ? "del" : k === "+" ? "add" : "" },
        h("td", null, k), h("td", null, esc(s)))))));
    save.disabled = changed === 0;
  });
  save.addEventListener("click", async () => {
    save.disabled = true;
    try {
      const res = await post("/api/v1/dlq/" + encodeURIComponent(e.id) + "/edit", { text: area.value, reason: reason.value });
      toast(`saved as ${res.edited}; ${e.id} is kept as evidence`);
      location.hash = "#/message/" + encodeURIComponent(res.edited);
    } catch (err) { diffBox.append(h("p", { class: "error" }, esc(err.message))); }
  });
  return h("div", { class: "box", id: "editor" },
    h("h2", null, "Edit " + e.id),
    h("p", { class: "muted" }, "The original stays as evidence; from now on only the edited version is replayed (as edihub dlq edit)."),
    h("p", { class: "muted", id: "edit-charset" }, "Read and saved as " + esc(t.charset) + (t.syntax_id ? " (its UNB declares " + esc(t.syntax_id) + ")" : "") + "."),
    t.exact ? null : h("p", { class: "warn", id: "edit-lossy" }, "This payload has bytes that are not valid " + esc(t.charset) + "; the editor shows them as U+FFFD and saving would replace them. Use edihub dlq edit --from-file for byte-exact edits."),
    area, h("p", null, h("label", null, "Reason ", reason)), h("div", { class: "actions" }, preview, save), diffBox);
}

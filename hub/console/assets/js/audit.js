// The audit trail with filters, and whether its hash chain verifies.
import { h, clear, append } from "./dom.js";
import { get, call, qs } from "./api.js";
import { esc } from "./esc.js";
import { auditTable } from "./message.js";

export async function auditPage(view, params) {
  const f = { since: params.get("since") || "24h", actor: params.get("actor") || "", action: params.get("action") || "",
    message: params.get("message") || "", human: params.get("human") === "true", all: params.get("all") === "true" };
  view.append(h("h1", null, "Audit trail"));
  const status = h("div", { class: "box", id: "verify" }, "Verifying the chain…");
  view.append(status);
  const inp = (k) => h("label", null, k, h("input", { id: "a-" + k, name: k, value: f[k], size: 14 }));
  const since = h("label", null, "since", h("select", { id: "a-since", name: "since" },
    ["1h", "24h", "7d", "30d"].map(v => { const o = h("option", { value: v }, v); if (f.since === v) o.selected = true; return o; })));
  const human = h("input", { type: "checkbox", id: "a-human", name: "human", checked: f.human });
  // page views (show) are read events, left out unless asked for
  const all = h("input", { type: "checkbox", id: "a-all", name: "all", checked: f.all });
  const form = h("form", { class: "filters", id: "audit-filter" }, inp("actor"), inp("action"), inp("message"), since,
    h("label", null, "people only", human), h("label", null, "with page views", all), h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const v = {};
    for (const k of ["actor", "action", "message", "since"]) v[k] = form.elements[k].value.trim();
    v.human = human.checked ? "true" : "";
    v.all = all.checked ? "true" : "";
    location.hash = "#/audit" + qs(v);
  });
  view.append(form);
  const res = await get("/api/v1/audit" + qs({ ...f, human: f.human ? "true" : "", all: f.all ? "true" : "", limit: 500 }));
  view.append(h("p", { class: "muted" }, `${res.events.length} events (newest 500 at most), oldest first`), auditTable(res.events));
  view.setAttribute("data-ready", "audit");
  verify(status);
}

async function verify(status) {
  try {
    const v = await call("GET", "/api/v1/audit/verify", undefined, [409]);
    clear(status);
    status.setAttribute("data-ok", v.ok ? "true" : "false");
    append(status, [h("strong", { class: v.ok ? "ok" : "error" }, v.ok ? "Chain intact" : "Chain NOT intact"),
      ` · ${v.events} events · last seq ${v.last_seq} · ${v.authenticated ? "signed events verified" : "not authenticated"}`,
      v.last_hash ? [" · last hash ", h("code", { id: "last-hash" }, v.last_hash)] : null,
      v.note ? h("p", { class: "muted" }, esc(v.note)) : null,
      (v.problems || []).length ? h("ul", { class: "error" }, v.problems.map(p => h("li", null, `seq ${p.seq}: ${esc(p.kind)}: ${esc(p.detail)}`))) : null]);
  } catch (e) { status.textContent = "Cannot verify: " + esc(e.message); }
}

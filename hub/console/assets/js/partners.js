// Paused partners: the bulkhead's pauses (GET /api/v1/partners/paused),
// each released by an operator with a reason (POST .../resume, audited as
// partner-resumed under the operator's name, as edihub partner resume).
import { h, table, when, toast } from "./dom.js";
import { get, post, isOperator, APIError } from "./api.js";
import { esc } from "./esc.js";
import { ask } from "./ask.js";

async function resume(view, partner) {
  const v = await ask(`Resume partner ${esc(partner)}`,
    [{ name: "reason", label: "Reason (in the audit trail)", type: "textarea", required: true }], "Resume");
  if (!v) return;
  try {
    await post("/api/v1/partners/" + encodeURIComponent(partner) + "/resume", { reason: v.reason });
    toast(`${esc(partner)} resumed: its waiting messages run, in order`);
  } catch (e) {
    toast("Resume failed: " + esc(e.message));
  }
  view.replaceChildren();
  await paused(view);
}

export async function paused(view) {
  view.removeAttribute("data-ready");
  view.append(h("h1", null, "Paused partners"));
  let res;
  try { res = await get("/api/v1/partners/paused"); }
  catch (e) {
    if (!(e instanceof APIError) || e.status !== 404) throw e;
    view.append(h("p", { class: "muted", id: "paused-none" }, "The bulkhead is not configured for this API (hub.bulkhead): nobody is paused."));
    view.setAttribute("data-ready", "partners");
    return;
  }
  const ps = res.paused || [];
  view.append(h("p", { class: "muted" },
    "A partner whose dead letters and quarantines crossed the bulkhead's limit is paused on every instance: its messages wait in INGEST, " +
    "out of its partition's window, and its neighbours run on. Resume it once the cause is fixed (edihub partner resume ID --reason)."));
  if (ps.length === 0) {
    view.append(h("p", { id: "paused-none" }, "No partner is paused."));
  } else {
    view.append(table(["partner", "paused at", "by", "failed", "window", ""], ps.map(p => [
      h("strong", null, esc(p.partner)), when(p.at), esc(p.by || ""), `${p.failures} of ${p.messages}`, esc(p.window || ""),
      isOperator() ? h("button", { class: "primary resume", "data-partner": p.partner, onclick: () => resume(view, p.partner) }, "Resume…") : ""]),
    (i) => ({ class: "paused-row", "data-partner": ps[i].partner })));
  }
  view.setAttribute("data-ready", "partners");
}

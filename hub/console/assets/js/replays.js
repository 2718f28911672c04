// Replay batches: each replay that sent something, followed to what
// became of every copy (parsed, dead-lettered again, duplicate,
// quarantined, no verdict yet), as the API reads it from the streams.
import { h, table, when } from "./dom.js";
import { get } from "./api.js";
import { esc } from "./esc.js";

const ORDER = ["parsed", "dead-lettered", "duplicate", "quarantined", "no-verdict", "replayed"];
const SAY = { "dead-lettered": "dead-lettered again", "no-verdict": "no verdict yet", replayed: "not followed" };

// tally is a batch's outcome counts in words.
export function tally(t) {
  return ORDER.filter(k => t && t[k]).map(k => `${t[k]} ${SAY[k] || k}`).join(", ") || "—";
}

function link(id) {
  return h("a", { href: "#/message/" + encodeURIComponent(id) }, esc(id));
}

// batchLink points a replay report at its batch page.
export function batchLink(rep) {
  if (!rep.batch) return null;
  return h("p", { id: "replay-batch" }, "Replay batch ", h("a", { href: "#/replay/" + encodeURIComponent(rep.batch) }, esc(rep.batch)),
    ": ", h("span", { id: "replay-tally" }, tally(rep.tally)));
}

// outcomeCell is what became of one copy, with a link to a new dead
// letter or quarantine.
export function outcomeCell(it) {
  const bad = it.outcome === "dead-lettered" || it.outcome === "quarantined";
  const where = (bad && it.where) ? [" → ", link(it.where)] : [];
  return h("span", { class: "wrap" + (bad ? " error" : ""), "data-outcome": it.outcome },
    esc(it.verdict || (it.outcome === "no-verdict" ? "no verdict yet" : it.new_id || "")), ...where);
}

export async function replays(view) {
  view.append(h("h1", null, "Replays"));
  const res = await get("/api/v1/replays");
  view.append(h("p", { class: "muted" }, "Each replay that sent something, newest first; open one for its live tally."),
    table(["batch", "time", "operator", "messages", "outcome"], res.replays.map(b => [
      h("a", { href: "#/replay/" + encodeURIComponent(b.id) }, esc(b.id)), when(b.time), esc(b.operator), String(b.ids.length), tally(b.tally)]),
    (i) => ({ class: "replay-row", "data-id": res.replays[i].id })));
  view.setAttribute("data-ready", "replays");
}

export async function replay(view, id) {
  const b = await get("/api/v1/replays/" + encodeURIComponent(id));
  view.append(h("h1", null, "Replay " + esc(b.id)),
    h("p", null, "By " + esc(b.operator) + " at ", when(b.time), " · ", h("strong", { id: "batch-tally" }, tally(b.tally))),
    table(["ID", "to", "replayed as", "outcome"], b.items.map(it => [
      link(it.id), esc(it.subject || ""), esc(it.new_id || ""), outcomeCell(it)]),
    (i) => ({ class: "replay-item", "data-id": b.items[i].id, "data-outcome": b.items[i].outcome })));
  view.setAttribute("data-ready", "replay");
}

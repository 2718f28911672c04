// Messages (one page at a time, filtered on the server) and failure
// groups (stage, cause, error code and segment; fingerprints as
// sub-groups) with their group actions.
import { h, table, num, when, toast } from "./dom.js";
import { get, post, qs, isOperator } from "./api.js";
import { esc } from "./esc.js";
import { ask } from "./ask.js";
import { batchLink, outcomeCell } from "./replays.js";

const PAGE = 50;
const KEYS = ["kind", "stage", "cause", "partner", "since"];

function filterOf(params) {
  const f = {};
  for (const k of KEYS) if (params.get(k)) f[k] = params.get(k);
  return f;
}

// filters draws the filter bar; choosing a value changes the #fragment.
async function filters(view, page, f) {
  const sum = await get("/api/v1/dlq");
  const vals = { kind: new Set(), stage: new Set(), cause: new Set(), partner: new Set() };
  for (const r of sum.rows || []) for (const k of Object.keys(vals)) if (r[k]) vals[k].add(r[k]);
  const sel = (k) => h("label", null, k, h("select", { id: "f-" + k, onchange: (ev) => apply(k, ev.target.value) },
    h("option", { value: "" }, "all"),
    [...vals[k]].sort().map(v => { const o = h("option", { value: v }, esc(v)); if (f[k] === v) o.selected = true; return o; })));
  const since = h("label", null, "since", h("select", { id: "f-since", onchange: (ev) => apply("since", ev.target.value) },
    ["", "1h", "6h", "24h", "7d"].map(v => { const o = h("option", { value: v }, v || "any time"); if (f.since === v) o.selected = true; return o; })));
  const apply = (k, v) => { const n = { ...f, [k]: v }; location.hash = "#/" + page + qs(n); };
  view.append(h("div", { class: "filters" }, sel("kind"), sel("stage"), sel("cause"), sel("partner"), since,
    h("a", { href: "#/" + page }, "clear")));
}

function pager(total, offset, page, f) {
  const to = (o) => "#/" + page + qs({ ...f, offset: o || "" });
  return h("div", { class: "pager" },
    offset > 0 ? h("a", { href: to(Math.max(0, offset - PAGE)), id: "prev" }, "← newer") : null,
    h("span", { class: "muted", id: "count" }, total === 0 ? "none" : `${offset + 1}–${Math.min(total, offset + PAGE)} of ${total}`),
    offset + PAGE < total ? h("a", { href: to(offset + PAGE), id: "next" }, "older →") : null);
}

export async function messages(view, params) {
  const f = filterOf(params);
  const offset = Math.max(0, parseInt(params.get("offset") || "0", 10) || 0);
  view.append(h("h1", null, "Messages"));
  await filters(view, "messages", f);
  const res = await get("/api/v1/dlq" + qs({ view: "messages", ...f, offset, limit: PAGE, order: "newest" }));
  view.append(pager(res.total, offset, "messages", f));
  view.append(table(["ID", "kind", "stored", "partner", "stage", "cause", "error", ["size", { class: "num" }]],
    res.messages.map(m => [h("a", { href: "#/message/" + encodeURIComponent(m.id), class: "msg-link" }, m.id),
      h("span", { class: "badge " + m.kind }, m.kind), when(m.time), esc(m.partner), esc(m.stage), esc(m.cause),
      h("span", { class: "wrap" }, esc((m.error_msg || "").slice(0, 160))), num(m.size)]),
    (i) => ({ "data-id": res.messages[i].id })));
  view.setAttribute("data-ready", "messages");
}

export async function groups(view, params) {
  const f = filterOf(params);
  const offset = Math.max(0, parseInt(params.get("offset") || "0", 10) || 0);
  view.append(h("h1", null, "Failure groups"),
    h("p", { class: "muted" }, "Messages that failed the same way: same stage, cause, error code and segment (an error without a code: same fingerprint). " +
      "The fingerprints are the sub-groups. One decision for the lot: preview, then replay what would pass, park or drop."));
  await filters(view, "groups", f);
  const res = await get("/api/v1/dlq" + qs({ view: "groups", ...f, offset, limit: PAGE, max_ids: 1000 }));
  view.append(pager(res.total, offset, "groups", f));
  const out = h("div", { id: "group-result" });
  view.append(out); // previews and results show above the groups
  for (const g of res.groups) view.append(groupBox(g, f, out));
  view.setAttribute("data-ready", "groups");
}

// groupQuery is the API query that selects exactly group g on this page
// (the page's filter and the group's own).
function groupQuery(g, f) {
  const gf = g.filter || {};
  return { ...f, stage: gf.stage, cause: gf.cause, error_code: gf.error_code, error_segment: gf.error_segment, fingerprint: gf.fingerprint };
}

function groupBox(g, f, out) {
  const ids = g.ids;
  const partial = ids.length < g.count ? ` (the first ${ids.length}; run again for the rest)` : "";
  const idList = h("div", { class: "muted group-ids" }, "e.g. ", ids.slice(0, 5).map(id => [h("a", { href: "#/message/" + encodeURIComponent(id) }, id), " "]),
    g.count > 5 ? h("button", { class: "all-ids", onclick: () => allIDs(g, f, idList) }, `all ${g.count} IDs`) : null);
  const box = h("div", { class: "box group", "data-key": g.key },
    h("div", null, h("strong", { class: "group-count" }, String(g.count)), " × ", h("code", { class: "group-key" }, esc(g.key)), " ", esc(g.error_class || "")),
    h("div", { class: "wrap mono" }, esc(g.sample_error || "")),
    h("div", { class: "muted" }, `${g.kinds.map(esc).join(", ")} · partners ${g.partners.map(esc).join(", ")} · ${when(g.first)} – ${when(g.last)}`),
    h("details", { class: "subgroups" }, h("summary", null, `${g.subgroups.length} fingerprint${g.subgroups.length === 1 ? "" : "s"}`),
      table(["count", "fingerprint", "sample error"], g.subgroups.map(sg => [String(sg.count), h("code", null, esc(sg.fingerprint)),
        h("span", { class: "wrap mono" }, esc(sg.sample_error || ""))]), (i) => ({ class: "subgroup" }))),
    idList);
  const acts = h("div", { class: "actions" },
    h("button", { class: "dry-run", onclick: () => dryRun(ids, out) }, "Preview (dry-run)"));
  if (isOperator()) {
    acts.append(
      h("button", { class: "primary replay-group", onclick: () => replayGroup(ids, out, partial) }, "Replay group"),
      h("button", { class: "park-group", onclick: () => bulk("park", ids, out, partial) }, "Park group"),
      h("button", { class: "danger drop-group", onclick: () => bulk("drop", ids, out, partial) }, "Drop group"));
  }
  box.append(acts);
  return box;
}

// allIDs fetches every ID of a group (its filter with max_ids=0) and
// lists them.
async function allIDs(g, f, into) {
  try {
    const res = await get("/api/v1/dlq" + qs({ view: "groups", ...groupQuery(g, f), limit: 1 }));
    const all = (res.groups[0] || { ids: [] }).ids;
    into.replaceChildren(h("span", null, `all ${all.length} IDs: `),
      h("span", { class: "id-list" }, all.map(id => [h("a", { href: "#/message/" + encodeURIComponent(id) }, id), " "])));
  } catch (e) { into.append(h("span", { class: "error" }, " " + esc(e.message))); }
}

// passing is what a dry run says would replay.
const passing = (rep) => rep.items.filter(it => it.outcome === "would-replay").map(it => it.id);

async function dryRun(ids, out) {
  out.replaceChildren(h("p", { class: "muted" }, "Running this build's guard and parser on each message…"));
  try {
    const rep = await post("/api/v1/dlq/replay", { ids, dry_run: true, max: ids.length });
    out.replaceChildren(report("Dry-run: nothing changed", rep));
    const pass = passing(rep);
    if (isOperator() && pass.length > 0) {
      out.append(h("div", { class: "actions" }, h("button", { class: "primary", id: "replay-passing", onclick: () => replayIDs(pass, out, "") },
        `Replay the ${pass.length} that would pass`)));
    }
  } catch (e) { out.replaceChildren(h("div", { class: "box error" }, esc(e.message))); }
  out.scrollIntoView();
}

// replayGroup previews first: when some would fail, the operator replays
// the ones that pass, or all of them only after saying so explicitly.
async function replayGroup(ids, out, partial) {
  out.replaceChildren(h("p", { class: "muted" }, "Checking first (dry-run)…"));
  let rep;
  try { rep = await post("/api/v1/dlq/replay", { ids, dry_run: true, max: ids.length }); }
  catch (e) { out.replaceChildren(h("div", { class: "box error" }, esc(e.message))); return; }
  const pass = passing(rep);
  if (pass.length === ids.length) return replayIDs(ids, out, partial);
  out.replaceChildren(report(`Dry-run: ${ids.length - pass.length} of ${ids.length} would not pass; nothing replayed`, rep),
    h("div", { class: "actions" },
      pass.length > 0 ? h("button", { class: "primary", id: "replay-passing", onclick: () => replayIDs(pass, out, "") }, `Replay the ${pass.length} that would pass`) : null,
      h("button", { class: "danger", id: "replay-anyway", onclick: () => replayIDs(ids, out, partial, true) }, `Replay all ${ids.length} anyway`)));
  out.scrollIntoView();
}

async function replayIDs(ids, out, partial, anyway) {
  const fields = [
    { name: "reason", label: "Reason (in the audit trail)", required: true },
    { name: "rate", label: "Rate (messages per second, as the CLI's --rate)", value: "10", type: "number" }];
  if (anyway) fields.push({ name: "confirm", label: 'The dry run says some would fail again. Type "replay anyway" to go ahead', required: true });
  const v = await ask(`Replay ${ids.length} messages${partial}`, fields, "Replay", !!anyway);
  if (!v) return;
  if (anyway && v.confirm.trim() !== "replay anyway") { out.replaceChildren(h("div", { class: "box error" }, "Not replayed: the confirmation did not match.")); return; }
  out.replaceChildren(h("p", { class: "muted" }, `Replaying at ${v.rate}/s…`));
  try {
    const rep = await post("/api/v1/dlq/replay", { ids, max: ids.length, rate: Number(v.rate) || 10, reason: v.reason });
    out.replaceChildren(report("Replayed", rep));
  } catch (e) { out.replaceChildren(h("div", { class: "box error" }, esc(e.message))); }
}

async function bulk(action, ids, out, partial) {
  const v = await ask(`${action === "park" ? "Park" : "Drop"} ${ids.length} messages${partial}`,
    [{ name: "reason", label: "Reason (required, in the audit trail)", required: true }],
    action === "park" ? "Park" : "Drop for good", action === "drop");
  if (!v) return;
  try {
    const res = await post("/api/v1/dlq/" + action, { ids, reason: v.reason }, [207]);
    toast(`${res.done} ${action === "park" ? "parked" : "dropped"}, ${res.failed} failed`);
    out.replaceChildren(table(["ID", "result", "new ID", "error"],
      res.results.map(r => [r.id, r.ok ? "ok" : "failed", r.new_id || "", esc(r.error || "")])));
  } catch (e) { out.replaceChildren(h("div", { class: "box error" }, esc(e.message))); }
}

export function report(title, rep) {
  return h("div", { class: "box", id: "replay-report" },
    h("h2", null, `${title}: ${rep.replayed} ${rep.dry_run ? "would replay" : "replayed"}, ${rep.skipped} skipped, ${rep.failed} failed` + (rep.left ? `, ${rep.left} left` : "")),
    table(["ID", "outcome", "to", "detail"], rep.items.map(it => [
      it.id + (it.version ? " → " + it.version : ""), h("span", { class: it.outcome.startsWith("would-fail") || it.outcome === "failed" ? "error" : "" }, it.outcome),
      esc(it.subject || ""), it.error ? h("span", { class: "wrap" }, esc(it.error)) : it.dry_run ? h("span", { class: "wrap" }, dryText(it.dry_run)) : outcomeCell(it)])),
    batchLink(rep));
}

function dryText(d) {
  return [esc(d.verdict), d.guard && d.guard !== "ok" ? "guard: " + esc(d.guard) : "", d.parse ? "parse: " + esc(d.parse) : "",
    d.types && d.types.length ? "types: " + d.types.map(esc).join(" ") : ""].filter(Boolean).join(" · ");
}

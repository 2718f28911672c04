// One message: facts, error, headers, the payload one segment a line
// (escaped by the server's Segments view) with the failing segment
// highlighted, history, forensic report and ticket, and the actions.
import { h, table, when, toast } from "./dom.js";
import { get, post, qs, isOperator } from "./api.js";
import { esc } from "./esc.js";
import { ask } from "./ask.js";
import { report } from "./list.js";
import { editor } from "./edit.js";

export async function message(view, id) {
  const m = await get("/api/v1/dlq/" + encodeURIComponent(id));
  const e = m.entry;
  view.append(h("h1", null, h("span", { class: "badge " + e.kind }, e.kind), " ", e.id));
  const fact = (k, v) => [h("dt", null, k), h("dd", { "data-fact": k }, v)];
  view.append(h("dl", { class: "kv box" },
    fact("stored", when(e.time)), fact("subject", esc(e.subject)), fact("partner", esc(e.partner)), fact("stage", esc(e.stage)),
    fact("cause", esc(e.cause)), fact("error class", esc(e.error_class)), fact("fingerprint", esc(e.fingerprint)),
    fact("original topic", esc(e.original_topic)), fact("interchange", esc(e.message_id)), fact("attempts", String(e.attempts || 0)),
    fact("size", e.size + " bytes"), fact("payload SHA-256", m.payload_sha256),
    m.referenced ? fact("payload stored aside", esc(m.referenced.ref) + " (" + m.referenced.size + " bytes" +
      (m.referenced.error ? "; not fetched: " + esc(m.referenced.error) + " — the body is shown" : ", fetched and checked") + ")") : null,
    e.edited_from ? fact("edited from", h("a", { href: "#/message/" + encodeURIComponent(e.edited_from) }, esc(e.edited_from))) : null,
    e.superseded_by ? fact("superseded by", m.edit_gone || e.edit_replayed_as || e.superseded_by === "pending" ? esc(e.superseded_by) + (e.superseded_by === "pending" ? "" : " (no longer stored)")
      : h("a", { href: "#/message/" + encodeURIComponent(e.superseded_by) }, esc(e.superseded_by))) : null));

  const result = h("div", { id: "action-result" });
  if (e.superseded_by === "pending") view.append(h("div", { class: "box warn", id: "edit-pending" },
    "An edited version is being stored, or storing it was cut off: edit it again (or drop it)."));
  if (e.superseded_by && e.superseded_by !== "pending") {
    // An edited original is evidence: its error was dealt with by the edit,
    // and every action belongs to the edit (replaying this ID sends it).
    view.append(editedOriginal(e, m));
  } else {
    if (e.edited_from) view.append(await editState(e));
    else if (e.error_msg) view.append(h("div", { class: "box error", id: "error-msg" }, h("strong", null, "Error: "), h("span", { class: "wrap mono" }, esc(e.error_msg))));
    if (isOperator()) view.append(actions(e, m, result));
  }
  view.append(result);
  if (e.kind === "poison") await poison(view, e.id);

  const ubl = m.segments && m.segments.standard === "UBL";
  view.append(h("h2", null, ubl ? "Payload, one UBL element a line (line:column, XPath, value; failing rules after <-)"
    : "Payload, one segment a line (byte offsets; read as " + esc(m.segments.charset || "ASCII") +
      (m.segments.syntax_id ? ", as its UNB declares " + esc(m.segments.syntax_id) : "") + "; controls and bidi marks escaped)"), segments(m.segments, e.edited_from ? "" : e.error_msg)); // an edit's x-error-msg is its original's

  const hdrs = Object.entries(e.headers || {}).sort(([a], [b]) => a.localeCompare(b));
  view.append(h("h2", null, "Headers"), table(["name", "value"], hdrs.flatMap(([k, vs]) => vs.map(v => [h("code", null, esc(k)), h("span", { class: "wrap mono" }, esc(v))]))));

  const hv = (k) => (e.headers && e.headers[k] && e.headers[k][0]) || "";
  view.append(h("h2", null, "Attempt history"), h("dl", { class: "kv box" },
    fact("attempts", hv("x-attempts") || "—"), fact("retries", hv("x-retry-count") || "—"),
    fact("first failed", esc(hv("x-first-failed-at")) || "—"), fact("detected", esc(hv("x-detected-at")) || "—"),
    fact("poison cause", esc(hv("x-poison-cause")) || "—")));
  const hist = await get("/api/v1/audit" + qs({ message: e.id, all: "true", limit: 50 }));
  view.append(h("h3", null, "Audit events naming " + e.id), auditTable(hist.events));

  view.setAttribute("data-ready", "message");
}

// editedOriginal says what became of an original replaced by its edit,
// with a link only to a version that is still stored.
function editedOriginal(e, m) {
  const link = (id) => h("a", { href: "#/message/" + encodeURIComponent(id) }, esc(id));
  const box = h("div", { class: "box", id: "edit-state", "data-state": e.edit_replayed_as ? "done" : m.edit_gone ? "edit-gone" : "superseded" });
  if (e.edit_replayed_as) box.append(h("strong", null, "Edited and replayed: "), `its edit ${esc(e.superseded_by)} was replayed as ${esc(e.edit_replayed_as)}. `,
    "This original stays as evidence; nothing is left to do with it.");
  else if (m.edit_gone) box.append(h("strong", null, "Edited: "), `its edit ${esc(e.superseded_by)} is no longer stored (dropped or expired; the audit trail says which). `,
    "This original stays as evidence and is never replayed.");
  else box.append(h("strong", null, "Edited: "), "replaced by ", link(e.superseded_by), ". Replay, park or drop the edit there; this original stays as evidence and is never replayed.");
  if (e.error_msg) box.append(h("details", { id: "original-error" }, h("summary", null, "The error before the edit"), h("span", { class: "wrap mono" }, esc(e.error_msg))));
  return box;
}

// editState is an edited copy's own state: what a replay of it would do
// now (a dry run: this build's guard and parser, nothing changed), with
// the original's error kept apart. The copy carries the original's
// headers, so its x-error-msg is the original's, not its own.
async function editState(e) {
  const hv = (k) => (e.headers && e.headers[k] && e.headers[k][0]) || "";
  const box = h("div", { class: "box", id: "edit-state" }, h("p", null, h("strong", null, "Edited version"), ` of ${esc(e.edited_from)}`,
    hv("x-edited-by") ? ", by " + esc(hv("x-edited-by")) : "", hv("x-edited-at") ? ", at " + esc(hv("x-edited-at")) : "", ". Not replayed yet."));
  if (e.kind !== "poison") {
    try {
      const rep = await post("/api/v1/dlq/" + encodeURIComponent(e.id) + "/replay", { dry_run: true });
      const it = rep.items[0] || {};
      const ok = it.outcome === "would-replay";
      box.dataset.state = ok ? "would-replay" : "would-fail";
      box.append(h("p", { class: ok ? "ok" : "error", id: "edit-verdict" }, ok ? "A replay would pass: " : "A replay would fail: ",
        it.error ? esc(it.error) : it.dry_run ? esc(it.dry_run.verdict) + (it.dry_run.parse && it.dry_run.parse !== "ok" ? " · parse: " + esc(it.dry_run.parse) : "") : ""));
    } catch (err) { box.append(h("p", { class: "muted" }, "No dry run: " + esc(err.message))); }
  }
  if (e.error_msg) box.append(h("details", { id: "original-error" }, h("summary", null, "The original's error (before the edit)"), h("span", { class: "wrap mono" }, esc(e.error_msg))));
  return box;
}

// The failing place: an offset or a segment number in the error text.
function failingSegment(lines, msg) {
  if (!msg) return -1;
  const off = /offset (\d+)/.exec(msg);
  if (off) {
    const o = Number(off[1]);
    for (let i = lines.length - 1; i >= 0; i--) if (lines[i].offset <= o) return i;
  }
  const seg = /segment (\d+)/.exec(msg);
  if (seg) return lines.findIndex(l => l.n === Number(seg[1]));
  return -1;
}

// markElement shows a segment's text with data element n (the tag is 0)
// marked; the text is the server's escaped form, where a released
// separator reads ?+.
function markElement(text, n, sep) {
  let k = 0, start = -1, end = text.length;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "?") { i++; continue; }
    if (text[i] === sep || text[i] === "'") {
      k++;
      if (k === n) start = i + 1;
      else if (k === n + 1) { end = i; break; }
    }
  }
  if (start < 0) return text;
  return [text.slice(0, start), h("mark", { id: "failing-element" }, text.slice(start, end)), text.slice(end)];
}

// inRest reports whether the failing place lies in the bytes the reader
// never read: the failing segment is then the first of the rest, not the
// last segment read.
function inRest(v, lines, msg) {
  if (!msg || !v.rest) return false;
  const off = /offset (\d+)/.exec(msg);
  if (off) return Number(off[1]) >= (v.rest_offset || 0);
  const seg = /segment (\d+)/.exec(msg);
  return !!seg && !lines.some(l => l.n === Number(seg[1])) && Number(seg[1]) > (lines.length ? lines[lines.length - 1].n : 0);
}

// restView marks the rest's first segment (up to the first unreleased
// terminator of the escaped text) as the failing one.
function restView(v, failing, term, n) {
  if (!failing) return h("pre", { class: "wrap", id: "rest" }, v.rest);
  let end = v.rest.length;
  for (let i = 0; i < v.rest.length; i++) {
    if (v.rest[i] === "?") { i++; continue; }
    if (v.rest[i] === term) { end = i + 1; break; }
  }
  return h("pre", { class: "wrap", id: "rest" }, h("mark", { id: "failing-segment", class: "fail", "data-n": String(n), "data-offset": String(v.rest_offset || 0) },
    v.rest.slice(0, end)), v.rest.slice(end));
}

function segments(v, msg) {
  const lines = v.lines || [];
  // UBL: the server marks each failing element with "  <- RULE"
  const ubl = v.standard === "UBL" && lines.length > 0;
  const failing = (l, i) => ubl ? l.text.includes("  <- ") : i === fail;
  const unread = !ubl && inRest(v, lines, msg);
  const fail = ubl ? lines.findIndex(l => l.text.includes("  <- ")) : unread ? -1 : failingSegment(lines, msg);
  const rows = [];
  if (v.prefix) rows.push(h("tr", null, h("td", { class: "nr" }), h("td", { class: "off" }, "@0"), h("td", null, v.prefix)));
  const elem = /element (\d+)/.exec(msg || "");
  const sep = v.prefix && v.prefix.startsWith("UNA") && v.prefix.length > 4 ? v.prefix[4] : "+";
  lines.forEach((l, i) => rows.push(h("tr", { class: failing(l, i) ? "fail" : null, "data-n": l.n, id: i === fail ? "failing-segment" : null },
    h("td", { class: "nr" }, String(l.n)), h("td", { class: "off" }, "@" + l.offset),
    h("td", null, i === fail && elem && !ubl ? markElement(l.text, Number(elem[1]), sep) : l.text))));
  const box = h("div", { class: "box" }, h("table", { class: "seg", id: "segments" }, h("tbody", null, rows)));
  if (v.error) box.append(h("p", { class: "error" }, (ubl ? "" : "reader stopped: ") + v.error));
  const term = v.prefix && v.prefix.startsWith("UNA") && v.prefix.length > 8 ? v.prefix[8] : "'";
  if (v.rest) box.append(h("p", { class: "muted" }, unread ? `the failing segment was never read: it starts the unread bytes at offset ${v.rest_offset || 0} (escaped, marked):`
    : `unread bytes from offset ${v.rest_offset || 0} (escaped):`), restView(v, unread, term, lines.length ? lines[lines.length - 1].n + 1 : 1));
  if (v.truncated) box.append(h("p", { class: "muted" }, "truncated: the CLI's dlq show --all shows everything"));
  return box;
}

export function auditTable(events) {
  if (!events || events.length === 0) return h("p", { class: "muted" }, "None.");
  return table(["seq", "time", "actor", "action", "IDs", "reason", "details"], events.map(r => r.error
    ? [String(r.seq), when(r.stored), "", h("span", { class: "error" }, "not an event"), "", esc(r.error), ""]
    : [String(r.seq), when(r.event.time), esc(r.event.actor), esc(r.event.action),
      (r.event.ids || []).map(id => [h("a", { href: "#/message/" + encodeURIComponent(id) }, esc(id)), " "]),
      h("span", { class: "wrap" }, esc(r.event.reason || "")),
      h("span", { class: "wrap mono" }, Object.entries(r.event.details || {}).map(([k, v]) => esc(k) + "=" + esc(v)).join(" "))]),
    (i) => ({ class: "audit-row", "data-action": events[i].event ? events[i].event.action : "" }));
}

function actions(e, m, result) {
  const poison = e.kind === "poison";
  const out = (node) => { result.replaceChildren(node); };
  const fail = (err) => out(h("div", { class: "box error" }, esc(err.message)));
  const bar = h("div", { class: "actions" },
    poison ? null : h("button", { id: "dry-run", onclick: async () => {
      try { out(report("Dry-run: nothing changed", await post("/api/v1/dlq/" + encodeURIComponent(e.id) + "/replay", { dry_run: true }))); } catch (err) { fail(err); }
    } }, "Preview replay (dry-run)"),
    h("button", { class: "primary", id: "replay", onclick: async () => {
      // Not poison: check first; a replay the dry run says would fail goes
      // ahead only when the operator types that they want it anyway.
      let verdict = null;
      if (!poison) {
        try {
          const dry = await post("/api/v1/dlq/" + encodeURIComponent(e.id) + "/replay", { dry_run: true });
          const it = dry.items[0];
          if (it && it.outcome !== "would-replay") verdict = it;
        } catch (err) { fail(err); return; }
      }
      const fields = [{ name: "reason", label: "Reason (in the audit trail)", required: !!verdict }];
      if (verdict) {
        out(report("Dry-run: a replay would fail; nothing replayed", { items: [verdict], replayed: 0, skipped: 0, failed: 1, dry_run: true }));
        fields.push({ name: "confirm", label: 'The dry run says it would fail again. Type "replay anyway" to go ahead', required: true });
      }
      const v = await ask("Replay " + e.id + (verdict ? " although it would fail" : ""), fields, verdict ? "Replay anyway" : "Replay", !!verdict);
      if (!v) return;
      if (verdict && v.confirm.trim() !== "replay anyway") { out(h("div", { class: "box error", id: "not-confirmed" }, "Not replayed: the confirmation did not match.")); return; }
      try {
        const rep = await post("/api/v1/dlq/" + encodeURIComponent(e.id) + "/replay", { reason: v.reason, allow_poison: poison });
        out(report("Replay", rep));
        if (rep.replayed > 0) toast(e.id + " replayed");
      } catch (err) { fail(err); }
    } }, poison ? "Replay poison (read the report first)" : "Replay"),
    h("button", { id: "edit", onclick: () => out(editor(e, m)) }, "Edit"),
    h("button", { id: "park", onclick: async () => {
      const v = await ask("Park " + e.id, [{ name: "reason", label: "Reason (required)", required: true }], "Park");
      if (!v) return;
      try { const r = await post("/api/v1/dlq/park", { ids: [e.id], reason: v.reason }, [207]); toast(r.done ? "parked" : "not parked"); out(resultTable(r)); } catch (err) { fail(err); }
    } }, "Park"),
    h("button", { class: "danger", id: "drop", onclick: async () => {
      const v = await ask("Drop " + e.id + " for good", [{ name: "reason", label: "Reason (required)", required: true }], "Drop", true);
      if (!v) return;
      try { await post("/api/v1/dlq/" + encodeURIComponent(e.id) + "/drop", { reason: v.reason }); toast(e.id + " dropped"); location.hash = "#/messages"; } catch (err) { fail(err); }
    } }, "Drop"));
  return bar;
}

function resultTable(r) {
  return table(["ID", "result", "new ID", "error"], r.results.map(x => [x.id, x.ok ? "ok" : "failed",
    x.new_id ? h("a", { href: "#/message/" + encodeURIComponent(x.new_id) }, x.new_id) : "", esc(x.error || "")]));
}

// preText shows a multi-line text (a stack, a child's output) as the CLI
// does with escape.Lines: line breaks and tabs kept, the rest escaped.
function preText(text) {
  return String(text).replace(/\n+$/, "").split("\n").map(l => l.split("\t").map(esc).join("\t")).join("\n");
}

// poison shows the forensic report as the CLI's poison show does: the
// fields (verdict first), then the stack and the child's output
// preformatted, then the ticket; the headers come later on the page.
async function poison(view, id) {
  view.append(h("h2", null, "Forensic report"));
  let pv;
  try { pv = await get("/api/v1/poison/" + encodeURIComponent(id)); }
  catch (e) { view.append(h("p", { class: "muted", id: "no-report" }, esc(e.message))); return; }
  const sb = pv.report.sandbox || {};
  view.append(h("div", { class: "box", id: "report" },
    h("dl", { class: "kv", id: "report-fields" }, (pv.fields || []).map(f => [h("dt", null, esc(f.name)),
      h("dd", { "data-field": f.name, class: f.name === "verdict" ? "verdict" : null }, esc(f.value))])),
    sb.stack ? [h("h3", null, "Stack"), h("pre", { class: "stack", id: "report-stack" }, preText(sb.stack))] : null,
    sb.stderr ? [h("h3", null, "Child output (head and tail)"), h("pre", { class: "stack", id: "report-stderr" }, preText(sb.stderr))] : null));
  const t = pv.ticket;
  if (!t) return;
  const box = h("div", { class: "box", id: "ticket" }, h("h3", null, "Ticket " + esc(t.id) + ": ", h("span", { id: "ticket-state" }, esc(t.state))),
    table(["at", "actor", "action", "note"], (t.notes || []).map(n => [when(n.at), esc(n.actor), esc(n.action), esc(n.text || "")])));
  if (isOperator() && t.state !== "closed") {
    const act = (action) => async () => {
      const v = await ask((action === "ack" ? "Acknowledge" : "Close") + " ticket " + t.id, [{ name: "note", label: "Note (required)", type: "textarea", required: true }], action === "ack" ? "Acknowledge" : "Close");
      if (!v) return;
      try { await post("/api/v1/poison/" + encodeURIComponent(id) + "/ticket/" + action, { note: v.note }); toast("ticket " + action); window.dispatchEvent(new HashChangeEvent("hashchange")); }
      catch (e) { box.append(h("p", { class: "error" }, esc(e.message))); }
    };
    box.append(h("div", { class: "actions" }, t.state === "open" ? h("button", { id: "ticket-ack", onclick: act("ack") }, "Acknowledge") : null,
      h("button", { id: "ticket-close", onclick: act("close") }, "Close")));
  }
  view.append(box);
}

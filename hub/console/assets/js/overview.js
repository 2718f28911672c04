// Overview: counts, the chart of dead letters and quarantines per hour,
// leak probe, alerts, partition lag. One API call (GET /api/v1/overview).
import { h, table, num, when, ago } from "./dom.js";
import { get, qs } from "./api.js";
import { esc } from "./esc.js";

const go = (params) => { location.hash = "#/messages" + qs(params); };

export async function overview(view, params) {
  const window = params.get("window") === "7d" ? "7d" : "24h";
  view.append(h("h1", null, "Overview"));
  const t0 = performance.now();
  const ov = await get("/api/v1/overview" + qs({ window }));
  const s = ov.summary;
  view.append(h("div", { class: "cards", id: "totals" },
    card("DLQ", s.totals.dlq, "dlq"), card("PARKING", s.totals.parking, "parking"), card("POISON", s.totals.poison, "poison"),
    h("div", { class: "card" }, h("div", { class: "n" }, String(s.superseded)), h("div", { class: "muted" }, "superseded by an edit"))));

  view.append(h("h2", null, "Dead letters and quarantines per hour, by cause"),
    h("div", { class: "actions" },
      h("a", { href: "#/?window=24h", class: window === "24h" ? "active" : "" }, "last 24 h"),
      h("a", { href: "#/?window=7d", class: window === "7d" ? "active" : "" }, "last 7 days")),
    chart(ov.chart));

  const by = (key) => {
    const m = new Map();
    for (const r of s.rows || []) m.set(r[key], (m.get(r[key]) || 0) + r.count);
    return [...m.entries()].sort((a, b) => b[1] - a[1]);
  };
  const facetTable = (title, key) => h("div", null, h("h2", null, title),
    table([title, ["count", { class: "num" }]], by(key).map(([v, n]) => [esc(v) || "(none)", num(n)]),
      (i) => ({ class: "click", "data-facet": key, onclick: () => go({ [key]: by(key)[i][0] }) })));
  const ages = {};
  for (const r of s.rows || []) for (const [k, n] of Object.entries(r.ages || {})) ages[k] = (ages[k] || 0) + n;
  view.append(h("div", { class: "grid" },
    facetTable("kind", "kind"), facetTable("stage", "stage"), facetTable("cause", "cause"), facetTable("partner", "partner"),
    h("div", null, h("h2", null, "age"), table(["age", ["count", { class: "num" }]],
      ["<1h", "1h-24h", "1d-7d", ">7d"].map(k => [k, num(ages[k] || 0)])))));

  const st = ov.status;
  const leak = !st ? h("p", { class: "muted" }, "Not reported (the API runs outside serve).")
    : st.leak_probe.firing.length === 0
      ? h("p", { class: "ok", id: "leak" }, "Quiet" + (st.leak_probe.last_sample ? " (last sample " + ago(st.leak_probe.last_sample) + ")" : " (no sample yet)"))
      : h("ul", { class: "warn", id: "leak" }, st.leak_probe.firing.map(f => h("li", null, esc(f))));
  const alerts = !st || st.recent_alerts.length === 0 ? h("p", { class: "muted" }, "No alerts since serve started.")
    : table(["at", "alert", "partner", "summary"], st.recent_alerts.map(a =>
      [when(a.at), esc(a.name), esc(a.partner || ""), esc(a.summary) + (a.suppressed ? " (+" + a.suppressed + " suppressed)" : "")]));
  const lag = ov.lag.length === 0 ? h("p", { class: "muted" }, "No ingest consumers.")
    : table(["partition consumer", ["pending", { class: "num" }], ["in flight", { class: "num" }], ["redelivered", { class: "num" }]],
      ov.lag.map(l => [esc(l.consumer), num(l.pending), num(l.ack_pending), num(l.redelivered)]));
  view.append(h("div", { class: "grid" },
    h("div", null, h("h2", null, "Leak probe"), leak, h("h2", null, "Recent alerts"), alerts),
    h("div", null, h("h2", null, "Partition lag"), lag)));
  view.append(h("p", { class: "muted", id: "timing" },
    "Server " + ov.took_ms + " ms, page " + Math.round(performance.now() - t0) + " ms."));
  view.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  view.setAttribute("data-ready", "overview");
}

function card(label, n, kind) {
  return h("div", { class: "card " + kind, "data-kind": kind, onclick: () => go({ kind }) },
    h("div", { class: "n" }, String(n)), h("div", { class: "muted" }, label));
}

// chart draws stacked bars per hour with SVG elements made one by one.
function chart(c) {
  const W = 960, H = 200, L = 40, B = 20, T = 10;
  const n = c.buckets;
  const totals = new Array(n).fill(0);
  for (const s of c.series) s.counts.forEach((v, i) => { totals[i] += v; });
  const max = Math.max(1, ...totals);
  const bw = (W - L - 10) / n;
  const y = (v) => H - B - (v / max) * (H - B - T);
  const svg = h("svg:svg", { class: "chart", id: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "dead letters per hour" });
  svg.append(h("svg:line", { class: "axis", x1: L, y1: H - B, x2: W - 10, y2: H - B }),
    h("svg:line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }),
    h("svg:text", { x: 2, y: T + 8 }, String(max)), h("svg:text", { x: 2, y: H - B }, "0"));
  const base = new Array(n).fill(0);
  c.series.forEach((s, si) => {
    s.counts.forEach((v, i) => {
      if (!v) return;
      const y0 = y(base[i]), y1 = y(base[i] + v);
      base[i] += v;
      const r = h("svg:rect", { class: "c" + (si % 8), x: (L + i * bw + 0.5).toFixed(1), y: y1.toFixed(1), width: Math.max(1, bw - 1).toFixed(1), height: Math.max(0.5, y0 - y1).toFixed(1) });
      r.append(h("svg:title", null, `${when(new Date(Date.parse(c.start) + i * c.bucket_seconds * 1000).toISOString())}: ${v} ${esc(s.kind)}/${esc(s.cause)}`));
      svg.append(r);
    });
  });
  const step = n > 48 ? 24 : 6;
  for (let i = 0; i <= n; i += step) {
    const t = new Date(Date.parse(c.start) + i * c.bucket_seconds * 1000);
    svg.append(h("svg:text", { x: (L + i * bw).toFixed(1), y: H - 5 }, n > 48 ? t.toISOString().slice(5, 10) : t.toISOString().slice(11, 16)));
  }
  const legend = h("div", { class: "legend" }, c.series.length === 0 ? h("span", { class: "muted" }, "Nothing in this window.")
    : c.series.map((s, si) => h("span", null, h("span", { class: "sw c" + (si % 8) }), `${esc(s.kind)} ${esc(s.cause) || "(none)"}: ${s.total}`)));
  return h("div", null, svg, legend);
}

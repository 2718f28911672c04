// The only way the console puts anything on the page: elements made with
// createElement and text with text nodes. Nothing here parses markup,
// so a payload's "<script>" is shown as the characters it is.
const SVG = "http://www.w3.org/2000/svg";

// h("tr", {class: "x", onclick: f}, "text", child, ...) builds an element.
// Attribute values are set with setAttribute (never as markup); event
// handlers are functions added with addEventListener.
export function h(tag, attrs, ...children) {
  const el = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "value") el.value = v;
    else if (k === "checked") el.checked = !!v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// clear empties an element.
export function clear(el) { el.replaceChildren(); return el; }

// table builds a table from header labels and rows of cells.
export function table(headers, rows, rowAttrs) {
  return h("table", null,
    h("thead", null, h("tr", null, headers.map(x => typeof x === "string" ? h("th", null, x) : h("th", x[1], x[0])))),
    h("tbody", null, rows.map((cells, i) => h("tr", rowAttrs ? rowAttrs(i) : null, cells.map(c => c instanceof Node && c.tagName === "TD" ? c : h("td", null, c))))));
}

export function num(n) { return h("td", { class: "num" }, String(n)); }

export function when(t) {
  if (!t || t.startsWith("0001-")) return "";
  const d = new Date(t);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function ago(t) {
  const s = (Date.now() - new Date(t).getTime()) / 1000;
  if (s < 90) return Math.round(s) + "s ago";
  if (s < 5400) return Math.round(s / 60) + "m ago";
  if (s < 129600) return Math.round(s / 3600) + "h ago";
  return Math.round(s / 86400) + "d ago";
}

export function toast(msg) {
  let t = document.getElementById("toast");
  if (!t) { t = h("div", { id: "toast", role: "status" }); document.body.append(t); }
  t.textContent = msg;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.remove(), 4000);
}

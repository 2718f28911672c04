// esc shows a string as escape.Line does on the server and the CLI in a
// terminal: printable ASCII as is, a backslash doubled, \n \r \t, and
// every other byte of its UTF-8 form as \xNN, so control sequences, bidi
// overrides (U+202E) and look-alike letters are visible, never obeyed.
// A browser test runs it against escape.Line on the same cases.
const enc = new TextEncoder();
const HEX = "0123456789ABCDEF";

export function esc(s) {
  if (s === undefined || s === null) return "";
  s = String(s);
  let plain = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c || c < 0x20 || c >= 0x7f) { plain = false; break; }
  }
  if (plain) return s;
  const b = enc.encode(s);
  let out = "";
  for (const c of b) {
    if (c === 0x5c) out += "\\\\";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x09) out += "\\t";
    else if (c >= 0x20 && c < 0x7f) out += String.fromCharCode(c);
    else out += "\\x" + HEX[c >> 4] + HEX[c & 15];
  }
  return out;
}

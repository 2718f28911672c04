// esc shows a string as escape.Text does on the server and the CLI: the
// printable characters of every script as they are (an em-dash, a
// partner's Ü); C0 controls, DEL, C1 controls, the line and paragraph
// separators and the bidi controls as \xNN of their UTF-8 bytes; tab, CR
// and LF as \t, \r and \n. So control sequences and bidi overrides
// (U+202E) are visible, never obeyed. A backslash is left alone: the
// values the hub stores are escaped once already (escape.Header), and the
// payload lines come escaped from the server (escape.Decoded), so nothing
// is escaped twice. A browser test runs it against escape.Text.
const enc = new TextEncoder();
const HEX = "0123456789ABCDEF";

function unsafe(c) {
  return c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f) || c === 0x061c || c === 0x200e || c === 0x200f ||
    c === 0x2028 || c === 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
    (c >= 0xd800 && c <= 0xdfff); // a lone surrogate is not text
}

export function esc(s) {
  if (s === undefined || s === null) return "";
  s = String(s);
  let plain = true;
  for (let i = 0; i < s.length; i++) if (unsafe(s.charCodeAt(i))) { plain = false; break; }
  if (plain) return s;
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (c === 0x0a) out += "\\n";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x09) out += "\\t";
    else if (!unsafe(c)) out += ch;
    else for (const b of enc.encode(ch)) out += "\\x" + HEX[b >> 4] + HEX[b & 15];
  }
  return out;
}

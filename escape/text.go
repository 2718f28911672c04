package escape

import (
	"strings"
	"unicode/utf8"
)

// Text makes a message fit for a terminal or a log line while keeping it
// readable: C0 controls, DEL, C1 controls (U+0080–U+009F), the line and
// paragraph separators, bidi controls and bytes that are not UTF-8 are
// shown as \xNN (tab, CR and LF as \t, \r and \n); everything else prints
// as it is, so the CLI's own punctuation (—, →) and partners' names in
// their own scripts stay legible.
//
// Text is for messages that mix the program's own words with values it
// quotes (errors, log messages). Unlike Line it leaves backslashes alone,
// so a value that was escaped already passes unchanged (Text(Line(s)) ==
// Line(s)); the price is that a literal `\x1B` in the value reads like an
// escaped ESC. Where the reader must tell the two apart (payloads, header
// values in the runbook), use Line.
func Text(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 16)
	sb.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			writeASCII(&sb, c, false)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			for j := 0; j < n; j++ {
				writeHex(&sb, s[i+j])
			}
		} else {
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	return sb.String()
}

// writeASCII writes the ASCII byte c as Text and Decoded show it: LF, CR
// and tab as \n, \r and \t, other controls and DEL as \xNN, a backslash
// doubled when doubleBackslash (Decoded, like Line: an escape told apart
// from a backslash in the data).
func writeASCII(sb *strings.Builder, c byte, doubleBackslash bool) {
	switch {
	case c == '\\' && doubleBackslash:
		sb.WriteString(`\\`)
	case c == '\n':
		sb.WriteString(`\n`)
	case c == '\r':
		sb.WriteString(`\r`)
	case c == '\t':
		sb.WriteString(`\t`)
	case c < 0x20 || c == 0x7f:
		writeHex(sb, c)
	default:
		sb.WriteByte(c)
	}
}

func writeHex(sb *strings.Builder, c byte) {
	sb.WriteString(`\x`)
	sb.WriteByte(hexDigits[c>>4])
	sb.WriteByte(hexDigits[c&15])
}

// firstUnsafe is the index of the first byte Text changes, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			return i
		}
		i += n
	}
	return -1
}

// unsafeRune reports the non-ASCII runes that control a terminal or the
// direction or breaking of text: C1 controls (U+009B is CSI), the line
// and paragraph separators, and the bidi marks, embeddings, overrides and
// isolates.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Cut shortens s to at most n bytes, never inside a character: a bound on
// an untrusted text's length that keeps it valid UTF-8 where it was.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

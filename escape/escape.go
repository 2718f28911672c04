package escape

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789ABCDEF"

// lineMode says what escaping does with line breaks.
type lineMode int

const (
	oneLine    lineMode = iota // LF shown as \n
	breakLines                 // LF shown as \n and followed by a real line break
	rawLines                   // LF and tab kept as they are (stacks, stderr)
)

// Terminal returns b with every byte outside printable ASCII shown as
// \xNN, a backslash as \\, tab and CR as \t and \r, and LF as \n followed
// by a real line break (so a payload still reads line by line). ESC can
// never reach the terminal, so no escape sequence survives; UTF-8 is
// escaped too, because bidi overrides and look-alike characters lie to the
// reader as well.
func Terminal(b []byte) string { return bytesTo(b, breakLines) }

// Line is Terminal for one-line contexts (table cells, header values, log
// fields): LF is shown as \n without a line break.
func Line(s string) string { return stringTo(s, oneLine) }

// Lines keeps LF and tab (for stacks and stderr) and escapes the rest as
// Line does.
func Lines(s string) string { return stringTo(s, rawLines) }

func stringTo(s string, mode lineMode) string {
	if isPlain(s, mode) {
		return s
	}
	return bytesTo([]byte(s), mode)
}

// isPlain reports whether s needs no escaping (the common case: no copy).
func isPlain(s string, mode lineMode) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' || c >= 0x7f || c < 0x20 && !(mode == rawLines && (c == '\n' || c == '\t')) {
			return false
		}
	}
	return true
}

func bytesTo(b []byte, mode lineMode) string {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for _, c := range b {
		switch {
		case c == '\\':
			sb.WriteString(`\\`)
		case (c == '\n' || c == '\t') && mode == rawLines:
			sb.WriteByte(c)
		case c == '\n':
			sb.WriteString(`\n`)
			if mode == breakLines {
				sb.WriteByte('\n')
			}
		case c == '\r':
			sb.WriteString(`\r`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c >= 0x20 && c < 0x7f:
			sb.WriteByte(c)
		default:
			writeHex(&sb, c)
		}
	}
	return sb.String()
}

// MaxHeaderValue keeps error texts in headers short.
const MaxHeaderValue = 512

// Header makes s fit for a NATS header value, on one line and at most
// MaxHeaderValue bytes: error messages may quote hostile input, and a
// header value must not hold CR or LF. Tab, CR and LF become spaces;
// other controls, DEL, C1 controls, bidi controls, the line and paragraph
// separators and bytes that are not UTF-8 become \xNN. Every other
// character stays as it is (an em-dash, a partner's Ü), so the value is
// escaped once: a display shows it with Text, which changes nothing more.
func Header(s string) string {
	out := make([]byte, 0, min(len(s), MaxHeaderValue))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c < 0x7f:
				out = append(out, c)
			case c == '\n' || c == '\r' || c == '\t':
				out = append(out, ' ')
			default:
				out = append(out, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			}
			i++
		} else {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || unsafeRune(r) {
				for j := 0; j < n; j++ {
					out = append(out, '\\', 'x', hexDigits[s[i+j]>>4], hexDigits[s[i+j]&15])
				}
			} else if len(out)+n <= MaxHeaderValue {
				out = append(out, s[i:i+n]...)
			} else {
				break // never half a character
			}
			i += n
		}
		if len(out) >= MaxHeaderValue {
			break
		}
	}
	return string(out)
}

// Decoded is Line for text decoded from a charset: decode returns the
// character at the start of its argument and how many bytes it took
// ((utf8.RuneError, 1) for a byte it cannot decode). Printable characters
// of any script are shown as they read (Ü, not \xC3\x9C); controls, DEL,
// C1 controls, bidi controls, the line and paragraph separators and
// undecodable bytes are shown as \xNN of their bytes in the payload; a
// backslash is doubled and LF, CR and tab are \n, \r and \t, as Line
// does, so the reader can tell an escape from a backslash in the data.
func Decoded(b []byte, decode func([]byte) (rune, int)) string {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			writeASCII(&sb, c, true)
			i++
			continue
		}
		r, n := decode(b[i:])
		n = max(1, min(n, len(b)-i))
		if r == utf8.RuneError && n == 1 || r < 0x20 || r == 0x7f || unsafeRune(r) {
			for j := 0; j < n; j++ {
				writeHex(&sb, b[i+j])
			}
		} else {
			sb.WriteRune(r)
		}
		i += n
	}
	return sb.String()
}

// Readable is Decoded for UTF-8 text: Line that keeps the printable
// characters of every script (an XML value, a partner's name).
func Readable(s string) string {
	if isPlain(s, oneLine) {
		return s
	}
	return Decoded([]byte(s), utf8.DecodeRune)
}

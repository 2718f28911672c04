package escape

import "strings"

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
			sb.WriteString(`\x`)
			sb.WriteByte(hexDigits[c>>4])
			sb.WriteByte(hexDigits[c&15])
		}
	}
	return sb.String()
}

// MaxHeaderValue keeps error texts in headers short.
const MaxHeaderValue = 512

// Header makes s printable ASCII on one line and at most MaxHeaderValue
// bytes, for a NATS header value: error messages may quote hostile input,
// and a header value must not hold CR or LF.
func Header(s string) string {
	out := make([]byte, 0, min(len(s), MaxHeaderValue))
	for i := 0; i < len(s) && len(out) < MaxHeaderValue; i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			out = append(out, c)
		case c == '\n' || c == '\r' || c == '\t':
			out = append(out, ' ')
		default:
			out = append(out, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return string(out)
}

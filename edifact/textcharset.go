package edifact

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// TextCharset is how the bytes of one payload read as text for a person:
// the runbook's payload view decodes with it, and the console's editor
// encodes the edited text back with it, so that a Latin-1 (UNOC) payload
// is shown as "BÜTTNER" and saved as Latin-1 again.
type TextCharset struct {
	SyntaxID string // UNB S001/0001 as sent ("" when no UNB was read)
	Name     string // IANA name of the encoding used: UTF-8, ISO-8859-1, ISO-8859-2, ...
	utf8     bool
	high     *[96]rune // ISO 8859 part for 0xA0..0xFF; nil for UTF-8 and Latin-1
}

// CharsetOf says how data, which declares syntax identifier syntaxID,
// reads as text. UNOW and UNOY are UTF-8, UNOC is ISO 8859-1, UNOD..UNOL
// their ISO 8859 parts. A 7-bit level (UNOA, UNOB), an unknown identifier
// or none (X12) carries no 8-bit bytes by definition; when it does anyway,
// it is UTF-8 if the whole payload is valid UTF-8 and Latin-1 otherwise, as
// the JSON view reads such values (toUTF8).
func CharsetOf(syntaxID string, data []byte) TextCharset {
	t := TextCharset{SyntaxID: syntaxID}
	c := lookupCharset(syntaxID)
	switch {
	case c != nil && c.utf8:
		t.Name, t.utf8 = "UTF-8", true
	case c != nil && c.latin1:
		t.Name = "ISO-8859-1"
	case c != nil && c.high != nil:
		t.Name, t.high = strings.ReplaceAll(c.note, " ", "-"), c.high
	case utf8.Valid(data):
		t.Name, t.utf8 = "UTF-8", true
	default:
		t.Name = "ISO-8859-1"
	}
	return t
}

// SyntaxIDOf returns the syntax identifier (S001/0001) of the first UNB
// in data, or "" when data starts with no readable UNB.
func SyntaxIDOf(data []byte) string {
	r := NewReader(bytes.NewReader(data))
	for range 2 { // UNB is the first segment; UNA is not counted
		seg, err := r.Read()
		if err != nil {
			return ""
		}
		if seg.Tag == "UNB" {
			if len(seg.Elements) > 0 && len(seg.Elements[0]) > 0 {
				return seg.Elements[0][0]
			}
			return ""
		}
	}
	return ""
}

// DecodeRune decodes the first character of b (len(b) > 0). A byte the
// charset does not define is (utf8.RuneError, 1), as utf8.DecodeRune
// reports an invalid byte; an 8-bit byte of 0x80..0x9F is the C1 control
// of the same number.
func (t TextCharset) DecodeRune(b []byte) (rune, int) {
	c := b[0]
	switch {
	case c < utf8.RuneSelf:
		return rune(c), 1
	case t.utf8:
		return utf8.DecodeRune(b)
	case t.high == nil || c < 0xA0:
		return rune(c), 1
	case t.high[c-0xA0] != 0:
		return t.high[c-0xA0], 1
	}
	return utf8.RuneError, 1
}

// Decode returns data as UTF-8 text and whether Encode gives data back
// byte for byte (false when a byte is not valid in the charset).
func (t TextCharset) Decode(data []byte) (string, bool) {
	var sb strings.Builder
	sb.Grow(len(data) + len(data)/16)
	exact := true
	for i := 0; i < len(data); {
		r, n := t.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			exact = false
		}
		sb.WriteRune(r)
		i += n
	}
	return sb.String(), exact
}

// Encode turns text back into the charset's bytes. A character the
// charset cannot carry is an error naming it and its place.
func (t TextCharset) Encode(text string) ([]byte, error) {
	if t.utf8 {
		return []byte(text), nil
	}
	out := make([]byte, 0, len(text))
	for i, r := range text {
		switch {
		case r < 0x80, t.high == nil && r <= 0xFF, t.high != nil && r < 0xA0:
			out = append(out, byte(r))
		default:
			b, ok := t.highByte(r)
			if !ok {
				return nil, fmt.Errorf("character %q (U+%04X) at byte %d of the text is not in %s, the charset %s declares; change UNB to UNOY (UTF-8) or write it differently",
					r, r, i, t.Name, t.declared())
			}
			out = append(out, b)
		}
	}
	return out, nil
}

func (t TextCharset) highByte(r rune) (byte, bool) {
	if t.high == nil || r == 0 {
		return 0, false
	}
	for i, x := range t.high {
		if x == r {
			return byte(0xA0 + i), true
		}
	}
	return 0, false
}

func (t TextCharset) declared() string {
	if t.SyntaxID == "" {
		return "the payload (no UNB syntax identifier)"
	}
	return "its UNB (" + t.SyntaxID + ")"
}

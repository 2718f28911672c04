package escape

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A header value is escaped once: the hub's own punctuation and a
// partner's name stay as they are, controls and bidi become \xNN, and
// showing it with Text changes nothing more (no \\x00, no \xE2\x80\x94).
func TestHeaderEscapesOnce(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"refused — BÜTTNER GmbH", "refused — BÜTTNER GmbH"},
		{"a\x00\x01b", `a\x00\x01b`},
		{"x\u202ey\u2066z", `x\xE2\x80\xAEy\xE2\x81\xA6z`},
		{"c1 \u009b2J", `c1 \xC2\x9B2J`},
		{"bad \xff\xc3", `bad \xFF\xC3`},
		{"line\r\nnext\ttab", "line  next tab"},
	} {
		got := Header(c.in)
		if got != c.want {
			t.Errorf("Header(%q) = %q, want %q", c.in, got, c.want)
		}
		if Text(got) != got {
			t.Errorf("Text(Header(%q)) = %q: shown escaped twice", c.in, Text(got))
		}
	}
	// The cap never cuts a character in half.
	long := strings.Repeat("a", MaxHeaderValue-1) + "ÜÜ"
	if got := Header(long); len(got) > MaxHeaderValue || !utf8.ValidString(got) || !strings.HasSuffix(got, "a") {
		t.Fatalf("Header of %d bytes ending in Ü: %d bytes, valid UTF-8 %v, ends %q", len(long), len(got), utf8.ValidString(got), got[len(got)-3:])
	}
}

func latin1Rune(b []byte) (rune, int) { return rune(b[0]), 1 }

// Decoded shows decoded text as it reads and escapes controls and bidi by
// their bytes in the payload, a backslash doubled.
func TestDecoded(t *testing.T) {
	for _, c := range []struct {
		in     string
		decode func([]byte) (rune, int)
		want   string
	}{
		{"NAD+BY+++B\xdcTTNER'", latin1Rune, "NAD+BY+++BÜTTNER'"},
		{"FTX+AAA+++a\x85b\x9b2J\x1b[0m'", latin1Rune, `FTX+AAA+++a\x85b\x9B2J\x1B[0m'`},
		{"NAD+BY+++BÜTTNER 東'", utf8.DecodeRune, "NAD+BY+++BÜTTNER 東'"},
		{"x\u202ey\u0085\xff\\z\n", utf8.DecodeRune, `x\xE2\x80\xAEy\xC2\x85\xFF\\z\n`},
		{"\x00\x7f\t\r", utf8.DecodeRune, `\x00\x7F\t\r`},
	} {
		if got := Decoded([]byte(c.in), c.decode); got != c.want {
			t.Errorf("Decoded(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Readable(`C:\x "Ü" ` + "\u2067"); got != `C:\\x "Ü" \xE2\x81\xA7` {
		t.Errorf("Readable = %q", got)
	}
	if s := "plain"; Readable(s) != s {
		t.Error("Readable changed plain ASCII")
	}
}

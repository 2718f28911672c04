package escape

import (
	"strings"
	"testing"
)

func TestTerminalNeutralisesControlSequences(t *testing.T) {
	in := "A\x1b]0;pwned\x07\x9b31m\u202eB\\C\r\nD\tE"
	got := Terminal([]byte(in))
	want := `A\x1B]0;pwned\x07\x9B31m\xE2\x80\xAEB\\C\r\n` + "\n" + `D\tE`
	if got != want {
		t.Fatalf("Terminal:\n got %s\nwant %s", got, want)
	}
	if got := Line(in); got != `A\x1B]0;pwned\x07\x9B31m\xE2\x80\xAEB\\C\r\nD\tE` {
		t.Fatalf("Line: %s", got)
	}
	if got := Lines("a\n\tb\x1b"); got != "a\n\tb\\x1B" {
		t.Fatalf("Lines: %q", got)
	}
	if got := Line("plain text"); got != "plain text" {
		t.Fatalf("plain text changed: %q", got)
	}
}

func TestHeaderIsBoundedPrintableASCII(t *testing.T) {
	if got := Header("a\r\nb\x00\xff"); got != `a  b\x00\xFF` {
		t.Fatalf("Header: %q", got)
	}
	long := make([]byte, 10*MaxHeaderValue)
	for i := range long {
		long[i] = 0x1b
	}
	if got := Header(string(long)); len(got) > MaxHeaderValue+3 {
		t.Fatalf("Header not bounded: %d bytes", len(got))
	}
}

func TestEscapeTerminalNeverPassesControlBytes(t *testing.T) {
	in := "A\x1b[31mred\x1b]0;title\x07\r\n\t\\ \x9b2J \xe2\x80\xae é\x00\x7f"
	got := Line(in)
	want := `A\x1B[31mred\x1B]0;title\x07\r\n\t\\ \x9B2J \xE2\x80\xAE \xC3\xA9\x00\x7F`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for i := 0; i < len(got); i++ {
		if got[i] < 0x20 || got[i] >= 0x7f {
			t.Fatalf("raw byte %#x at %d", got[i], i)
		}
	}
	if kept := Lines("a\nb\x1b"); kept != "a\nb\\x1B" {
		t.Fatalf("keepNewlines: %q", kept)
	}
}

// hostile is a payload an attacker would send to an operator's terminal:
// clear screen, retitle the window (OSC), a fake prompt, bidi override,
// NULs, DEL, CSI colour, and a trailing BEL.
var hostile = []byte("UNA:+.? 'UNB+UNOC:3+EVIL+ME+260101:0000+\x1b[2J\x1b]0;pwned\x07REF'\x00\x00" +
	"\x1b[31mroot# \x7f\u202eexe.txt\x9b1m\r\nrm -rf /\x1b[0m\a")

func TestEscapeForTerminalIsInert(t *testing.T) {
	out := Terminal(hostile)
	for i := 0; i < len(out); i++ {
		c := out[i]
		if (c < 0x20 && c != '\n') || c >= 0x7f {
			t.Fatalf("byte %#x at %d reaches the terminal: %q", c, i, out)
		}
	}
	for _, want := range []string{`\x1B[2J`, `\x1B]0;pwned\x07`, `\x00\x00`, `\x7F`, `\xE2\x80\xAE`, `\x9B`, `\r\n` + "\n", `\x07`} {
		if !strings.Contains(out, want) {
			t.Errorf("escaped output lacks %q:\n%s", want, out)
		}
	}
	if got := Line("a\nb\\c"); got != `a\nb\\c` {
		t.Fatalf("escape.Line: %q", got)
	}
}

// The escaping is reversible in the reader's head: a backslash in the data
// is doubled, so \x1B in the output always means the byte ESC.
func TestEscapeIsUnambiguous(t *testing.T) {
	if Line(`\x1B`) == Line("\x1b") {
		t.Fatal("a literal backslash-x looks like an escaped ESC")
	}
}

package hub

import (
	"bytes"
	"strings"
	"testing"
)

// hostile is a payload an attacker would send to an operator's terminal:
// clear screen, retitle the window (OSC), a fake prompt, bidi override,
// NULs, DEL, CSI colour, and a trailing BEL.
var hostile = []byte("UNA:+.? 'UNB+UNOC:3+EVIL+ME+260101:0000+\x1b[2J\x1b]0;pwned\x07REF'\x00\x00" +
	"\x1b[31mroot# \x7f\u202eexe.txt\x9b1m\r\nrm -rf /\x1b[0m\a")

func TestEscapeForTerminalIsInert(t *testing.T) {
	out := EscapeForTerminal(hostile)
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
	if got := EscapeLine("a\nb\\c"); got != `a\nb\\c` {
		t.Fatalf("EscapeLine: %q", got)
	}
}

// The escaping is reversible in the reader's head: a backslash in the data
// is doubled, so \x1B in the output always means the byte ESC.
func TestEscapeIsUnambiguous(t *testing.T) {
	if EscapeLine(`\x1B`) == EscapeLine("\x1b") {
		t.Fatal("a literal backslash-x looks like an escaped ESC")
	}
}

func TestSegmentsOneALineWithOffsets(t *testing.T) {
	v := Segments([]byte(twoInvoices), 0, 0)
	if v.Error != "" || v.Rest != "" {
		t.Fatalf("clean interchange: error %q rest %q", v.Error, v.Rest)
	}
	if len(v.Lines) != 10 || v.Lines[0].Tag != "UNB" || v.Lines[0].Offset != 9 || v.Prefix != "UNA:+.? '" {
		t.Fatalf("lines: %+v prefix %q", v.Lines, v.Prefix)
	}
	if v.Lines[9].Text != "UNZ+2+REF0001'" {
		t.Fatalf("last line %q", v.Lines[9].Text)
	}
	var b bytes.Buffer
	v.Render(&b)
	if !strings.Contains(b.String(), "    1 @9       UNB+UNOC:3+SENDER1:14") {
		t.Fatalf("render:\n%s", b.String())
	}
}

// A payload the reader refuses halfway shows what was read, the reader's
// error, and the rest escaped.
func TestSegmentsStopAtErrorAndEscapeTheRest(t *testing.T) {
	v := Segments(hostile, 0, 0)
	if v.Error == "" {
		t.Fatalf("hostile payload read without error: %+v", v)
	}
	var b bytes.Buffer
	v.Render(&b)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x00\x07\x7f") || !strings.Contains(out, "reader stopped") {
		t.Fatalf("render is not inert or lacks the error:\n%q", out)
	}
	if !strings.Contains(out, `\x1B[31mroot#`) {
		t.Fatalf("rest not shown escaped:\n%s", out)
	}
}

func TestSegmentsOfNonEDIAndLimits(t *testing.T) {
	v := Segments([]byte("\x1b[2Jhello"), 0, 0)
	if v.Error == "" || !strings.Contains(v.Rest, `\x1B[2Jhello`) {
		t.Fatalf("non-EDI: %+v", v)
	}
	v = Segments([]byte(twoInvoices), 3, 0)
	if len(v.Lines) != 3 || !v.Truncated {
		t.Fatalf("maxLines: %d lines truncated=%v", len(v.Lines), v.Truncated)
	}
	v = Segments(bytes.Repeat([]byte{0}, 1000), 0, 10)
	if !v.Truncated || strings.Count(v.Rest, `\x00`) != 10 {
		t.Fatalf("maxRest: %+v", v)
	}
}

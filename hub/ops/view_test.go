package ops

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostile is a payload an attacker would send to an operator's terminal:
// clear screen, retitle the window (OSC), a fake prompt, bidi override,
// NULs, DEL, CSI colour, and a trailing BEL.
var hostile = []byte("UNA:+.? 'UNB+UNOC:3+EVIL+ME+260101:0000+\x1b[2J\x1b]0;pwned\x07REF'\x00\x00" +
	"\x1b[31mroot# \x7f\u202eexe.txt\x9b1m\r\nrm -rf /\x1b[0m\a")

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

func TestSegmentsEDIFACTAndFallback(t *testing.T) {
	interchange := "UNA:+.? 'UNB+UNOC:3+S+R+261130:1200+R1'UNH+1+INVOIC:D:96A:UN'BGM+380+R1+9'UNT+3+1'UNZ+1+R1'"
	v := Segments([]byte(interchange), 0, 0)
	if len(v.Lines) != 5 || v.Prefix != "UNA:+.? '" || v.Lines[0].Tag != "UNB" || v.Lines[0].N != 1 || v.Lines[0].Offset != 9 || v.Lines[4].Tag != "UNZ" {
		t.Fatalf("view %+v", v)
	}
	// Broken in the middle: segments up to the error, then the escaped rest.
	bad := "UNB+UNOC:3+S+R+261130:1200+R1'UNH+1+INVOIC:D:96A:UN'\x1b[2J" + strings.Repeat("x", 100)
	v = Segments([]byte(bad), 0, 0)
	if v.Lines[0].Tag != "UNB" || v.Lines[1].Tag != "UNH" || !strings.HasPrefix(v.Rest, `\x1B[2J`) {
		t.Fatalf("view %+v", v)
	}
	// Not EDI at all.
	v = Segments([]byte("\x00\x01binary junk"), 0, 0)
	if len(v.Lines) != 0 || v.Rest != `\x00\x01binary junk` {
		t.Fatalf("view %+v", v)
	}
	// Bounded.
	v = Segments([]byte(strings.Repeat("z", 10000)), 5, 64)
	if len(v.Rest) != 64 || !v.Truncated {
		t.Fatalf("view %+v", v)
	}
}

// twoInvoices is one interchange with two INVOIC messages.
const twoInvoices = "UNA:+.? '" +
	"UNB+UNOC:3+SENDER1:14+RECEIVER1:14+261130:1200+REF0001'" +
	"UNH+1+INVOIC:D:96A:UN'BGM+380+INV001+9'DTM+137:20261130:102'UNT+4+1'" +
	"UNH+2+INVOIC:D:96A:UN'BGM+380+INV002+9'MOA+77:12?+5'UNT+4+2'" +
	"UNZ+2+REF0001'"

// A UBL payload is shown one element a line with its XPath, the failing
// element marked with its rule id; a refused one with the reason and the
// escaped bytes from the line it failed on.
func TestSegmentsUBL(t *testing.T) {
	var corpus string
	for _, d := range []string{"../../../shared/ubl", "../../../../shared/ubl"} {
		if _, err := os.Stat(filepath.Join(d, "invalid")); err == nil {
			corpus = d
		}
	}
	if corpus == "" {
		t.Skip("../shared/ubl not found")
	}
	data, err := os.ReadFile(filepath.Join(corpus, "invalid/itplr-kosit__validator-configuration-xrechnung__ubl-br-co-15-no-multiple-bt-110-allowed-test.xml"))
	if err != nil {
		t.Fatal(err)
	}
	v := Segments(data, 0, 0)
	if v.Standard != "UBL" || len(v.Lines) < 10 || v.Lines[0].Tag != "Invoice" || !strings.Contains(v.Error, "BR-CO-15") {
		t.Fatalf("view: standard %q, %d lines, error %q", v.Standard, len(v.Lines), v.Error)
	}
	marked := 0
	for _, l := range v.Lines {
		if strings.Contains(l.Text, "<- ") && strings.Contains(l.Text, "BR-CO-15") && strings.Contains(l.Text, "/Invoice") {
			marked++
		}
	}
	if marked == 0 {
		t.Errorf("no element marked BR-CO-15:\n%+v", v.Lines)
	}
	var b bytes.Buffer
	v.Render(&b)
	if !strings.Contains(b.String(), "/Invoice/cbc:ID") || !strings.Contains(b.String(), "!! fails fatal BR-CO-15") {
		t.Errorf("render:\n%s", b.String())
	}
	if v = Segments(data, 5, 0); len(v.Lines) != 5 || !v.Truncated {
		t.Errorf("maxLines: %d lines, truncated %v", len(v.Lines), v.Truncated)
	}
	hostileXML := []byte("<?xml version=\"1.0\"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>\n<Invoice>\x1b[2J&e;</Invoice>")
	v = Segments(hostileXML, 0, 0)
	b.Reset()
	v.Render(&b)
	if v.Standard != "UBL" || len(v.Lines) != 0 || !strings.Contains(v.Error, "line 3") || v.RestAt == 0 ||
		strings.ContainsAny(b.String(), "\x1b") || !strings.Contains(b.String(), `\x1B[2J`) {
		t.Errorf("hostile XML: %+v\n%s", v, b.String())
	}
}

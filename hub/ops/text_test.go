package ops

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// latin1Order is a UNOC interchange with a Latin-1 name (0xDC is Ü), a
// C1 control (0x9B, CSI in 8-bit terminals) in free text.
const latin1Order = "UNB+UNOC:3+SENDER1:14+RECEIVER1:14+261130:1200+L1'" +
	"UNH+1+ORDERS:D:96A:UN'BGM+220+PO1+9'NAD+BY+++B\xdcTTNER GMBH'FTX+AAA+++x\x9b2Jy'UNT+5+1'UNZ+1+L1'"

// A Latin-1 payload reads as people read it: Ü, not \xDC; the controls
// in it are still escaped, by their bytes in the payload.
func TestSegmentsDecodeByDeclaredCharset(t *testing.T) {
	v := Segments([]byte(latin1Order), 0, 0)
	if v.Charset != "ISO-8859-1" || v.SyntaxID != "UNOC" {
		t.Fatalf("charset %q syntax %q", v.Charset, v.SyntaxID)
	}
	var nad, ftx string
	for _, l := range v.Lines {
		switch l.Tag {
		case "NAD":
			nad = l.Text
		case "FTX":
			ftx = l.Text
		}
	}
	if nad != "NAD+BY+++BÜTTNER GMBH'" {
		t.Errorf("NAD shown as %q", nad)
	}
	if ftx != `FTX+AAA+++x\x9B2Jy'` {
		t.Errorf("FTX shown as %q", ftx)
	}

	utf := strings.Replace(strings.Replace(latin1Order, "UNOC", "UNOY", 1), "\xdc", "Ü", 1)
	v = Segments([]byte(utf), 0, 0)
	if v.Charset != "UTF-8" || !strings.Contains(v.Lines[3].Text, "BÜTTNER") {
		t.Fatalf("UNOY: %s %+v", v.Charset, v.Lines[3])
	}
	var b bytes.Buffer
	v.Render(&b)
	if !strings.Contains(b.String(), "BÜTTNER") || strings.Contains(b.String(), "\x1b") {
		t.Fatalf("render:\n%q", b.String())
	}
}

// The editor's text is the payload decoded; its edit is stored in the
// charset the edited UNB declares, so Latin-1 stays Latin-1.
func TestEditTextKeepsTheEncoding(t *testing.T) {
	pt := TextOf([]byte(latin1Order))
	if pt.Charset != "ISO-8859-1" || !pt.Exact || !strings.Contains(pt.Text, "BÜTTNER") {
		t.Fatalf("text of a Latin-1 payload: %+v", pt)
	}
	edited := strings.Replace(pt.Text, "BÜTTNER GMBH", "BÜTTNER & SÖHNE", 1)
	b, err := EncodeEdit([]byte(latin1Order), edited)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(latin1Order, "B\xdcTTNER GMBH", "B\xdcTTNER & S\xd6HNE", 1)
	if string(b) != want {
		t.Fatalf("stored %q, want %q", b, want)
	}
	// The same text under UNOY is stored as UTF-8.
	b, err = EncodeEdit([]byte(latin1Order), strings.Replace(edited, "UNOC", "UNOY", 1))
	if err != nil || !bytes.Contains(b, []byte("BÜTTNER & SÖHNE")) {
		t.Fatalf("UNOY edit: %q %v", b, err)
	}
	// A character UNOC cannot carry is refused with its name.
	_, err = EncodeEdit([]byte(latin1Order), strings.Replace(edited, "GMBH", "€", 1)+"€")
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "U+20AC") {
		t.Fatalf("€ under UNOC: %v", err)
	}
}

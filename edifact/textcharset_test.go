package edifact

import (
	"bytes"
	"strings"
	"testing"
)

func TestCharsetOf(t *testing.T) {
	for _, c := range []struct{ id, data, want string }{
		{"UNOC", "B\xdcTTNER", "ISO-8859-1"},
		{"UNOY", "BÜTTNER", "UTF-8"},
		{"UNOW", "BÜTTNER", "UTF-8"},
		{"UNOD", "\xa3\xf3d\xbc", "ISO-8859-2"},
		{"UNOL", "\xa4", "ISO-8859-15"},
		{"UNOB", "BÜTTNER", "UTF-8"},         // 8-bit bytes under a 7-bit level: UTF-8 when they are
		{"UNOB", "B\xdcTTNER", "ISO-8859-1"}, // and Latin-1 when they are not
		{"", "ISA*00*", "UTF-8"},
		{"XXXX", "\xff", "ISO-8859-1"},
	} {
		if got := CharsetOf(c.id, []byte(c.data)).Name; got != c.want {
			t.Errorf("CharsetOf(%q, %q) = %s, want %s", c.id, c.data, got, c.want)
		}
	}
}

func TestSyntaxIDOf(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"UNA:+.? 'UNB+UNOC:3+S+R+261130:1200+1'UNZ+0+1'", "UNOC"},
		{"UNB+UNOY:4+S+R+20261130:1200+1'", "UNOY"},
		{"ISA*00*          *00*", ""},
		{"garbage", ""},
	} {
		if got := SyntaxIDOf([]byte(c.data)); got != c.want {
			t.Errorf("SyntaxIDOf(%q) = %q, want %q", c.data, got, c.want)
		}
	}
}

// Decode and Encode round-trip every byte a charset defines: an editor
// saves a Latin-1 payload as Latin-1 again.
func TestTextCharsetRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	latin1 := CharsetOf("UNOC", all)
	text, exact := latin1.Decode(all)
	if !exact || !strings.Contains(text, "ÜÝÞß") {
		t.Fatalf("Latin-1 decode: exact %v", exact)
	}
	back, err := latin1.Encode(text)
	if err != nil || !bytes.Equal(back, all) {
		t.Fatalf("Latin-1 round trip: %v", err)
	}

	l2 := CharsetOf("UNOD", nil)
	text, exact = l2.Decode([]byte("NAD+BY+++\xa3\xf3d\xbc'"))
	if !exact || text != "NAD+BY+++Łódź'" {
		t.Fatalf("ISO 8859-2 decode: %q exact %v", text, exact)
	}
	if back, err := l2.Encode(text); err != nil || string(back) != "NAD+BY+++\xa3\xf3d\xbc'" {
		t.Fatalf("ISO 8859-2 encode: %q %v", back, err)
	}
	if _, exact := CharsetOf("UNOJ", nil).Decode([]byte{0xa1}); exact {
		t.Fatal("a byte ISO 8859-8 leaves undefined decodes exactly")
	}

	u := CharsetOf("UNOY", nil)
	if b, err := u.Encode("東京 €"); err != nil || string(b) != "東京 €" {
		t.Fatalf("UTF-8 encode: %q %v", b, err)
	}
	if _, exact := u.Decode([]byte("a\xffb")); exact {
		t.Fatal("invalid UTF-8 decodes exactly")
	}

	// A character the declared charset cannot carry is named, not replaced.
	_, err = latin1.Encode("NAD+BY+++EURO €'")
	if err == nil || !strings.Contains(err.Error(), "U+20AC") || !strings.Contains(err.Error(), "UNOC") {
		t.Fatalf("€ under UNOC: %v", err)
	}
}

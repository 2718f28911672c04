package escape

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestTextEscapesControlsButKeepsPunctuation(t *testing.T) {
	in := "sent a.edi → INGEST — ok; " + "A\x1b[2J\x9b\u009b\u202eB\u2066C\x7f\xff\r\n\tD ü 東"
	got := Text(in)
	want := `sent a.edi → INGEST — ok; A\x1B[2J\x9B\xC2\x9B\xE2\x80\xAEB\xE2\x81\xA6C\x7F\xFF\r\n\tD ü 東`
	if got != want {
		t.Fatalf("Text:\n got %s\nwant %s", got, want)
	}
	if got := Text("plain — →"); got != "plain — →" {
		t.Fatalf("punctuation changed: %q", got)
	}
	if l := Line("x\x1by\\z"); Text(l) != l {
		t.Fatalf("Text changed an escaped value: %q", Text(l))
	}
}

func TestJSONEscapesC1AndBidi(t *testing.T) {
	v := map[string]string{"h": "A\u009b2J\u202eB\u2028\u061c\x7f—→ü\x1b"}
	b, err := JSON(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"h":"A\u009b2J\u202eB\u2028\u061c\u007f—→ü\u001b"}`
	if string(b) != want {
		t.Fatalf("JSON:\n got %s\nwant %s", b, want)
	}
	var back map[string]string
	if err := json.Unmarshal(b, &back); err != nil || back["h"] != v["h"] {
		t.Fatalf("round trip: %q %v", back["h"], err)
	}
	for _, bad := range []string{"\u009b", "\u202e", "\x7f", "\x1b"} {
		if strings.Contains(string(b), bad) {
			t.Fatalf("%q left raw in %s", bad, b)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(JSONWriter(&buf))
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if buf.String() != want+"\n" {
		t.Fatalf("JSONWriter: %s", buf.String())
	}
	if got := JSONBytes([]byte("\"a\xffb\"")); string(got) != `"a\ufffdb"` {
		t.Fatalf("invalid UTF-8: %s", got)
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 5, "abc"}, {"abc", 3, "abc"}, {"abcd", 2, "ab"}, {"aÜb", 2, "a"}, {"aÜb", 3, "aÜ"}, {"Ü", 1, ""}, {"abc", 0, ""}} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

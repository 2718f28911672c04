package directory

import (
	"testing"

	"github.com/edihub/edihub/edifact"
)

// builtin decodes the shipped tables once per test binary run of a test.
func builtin(t testing.TB) *Set {
	t.Helper()
	set, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

const unb = "UNA:+.? 'UNB+UNOA:3+SENDER+RECEIVER+200101:1200+1'"

// parseOne parses an interchange holding one message.
func parseOne(t testing.TB, body string) *edifact.Message {
	t.Helper()
	doc, err := edifact.Parse([]byte(body), nil)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	msgs := doc.Messages()
	if len(msgs) != 1 {
		t.Fatalf("want 1 message, got %d", len(msgs))
	}
	return msgs[0]
}

// envelope wraps message segments (without UNH/UNT) in UNB..UNZ.
func envelope(typ string, segs ...string) string {
	s := unb + "UNH+1+" + typ + "'"
	for _, x := range segs {
		s += x + "'"
	}
	n := len(segs) + 2
	return s + "UNT+" + itoa(n) + "+1'UNZ+1+1'"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestValidMinimalOrders(t *testing.T) {
	v, err := NewValidator(builtin(t), &Options{Strictness: Strict})
	if err != nil {
		t.Fatal(err)
	}
	m := parseOne(t, envelope("ORDERS:D:96A:UN", "BGM+220+PO1+9", "DTM+137:20200101:102", "NAD+BY+123::9", "LIN+1++4000862141404:EN", "QTY+21:5", "UNS+S"))
	r := v.Validate(m)
	if !r.Validated || r.Directory != "D96A" {
		t.Fatalf("not validated: %+v", r)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("valid ORDERS refused: %v (%+v)", err, r.Findings)
	}
}

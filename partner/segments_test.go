package partner

import (
	"testing"
)

// The parse stage keeps a large message's segments only for a partner
// whose messages are read segment by segment here: the built-in rules (on
// unless builtin_rules: false) or a directory validation.
func TestReadsSegments(t *testing.T) {
	off := false
	reg, err := New(Config{Directory: "off", Profiles: []Profile{
		{ID: "BUILTINS"},
		{ID: "CEL", BuiltinRules: &off, Rules: []Rule{{Name: "lines", Expr: `msg.segments.size() > 0`}}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{"BUILTINS": true, "CEL": false, "UNKNOWN": false} {
		if got := reg.ReadsSegments(p); got != want {
			t.Errorf("%s: ReadsSegments %v, want %v", p, got, want)
		}
	}
}

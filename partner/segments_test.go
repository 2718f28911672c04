package partner

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// The built-in rules read a large message's segments again from the input
// when the parse stage did not keep them (edifact.WalkViews): the same
// verdicts as over kept segments, a failing MOA total or DTM date named by
// its segment number in both.
func TestBuiltinsOverSegmentsNotKept(t *testing.T) {
	big := func(tail string) []byte {
		var b bytes.Buffer
		b.WriteString("UNB+UNOA:3+SENDER:14+RECEIVER:14+261130:1200+BIG1'UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'DTM+137:20261130:102'")
		const lines = 3000 // over the 2 048 segments from which WalkViews does not keep them
		for range lines {
			b.WriteString("LIN+1'MOA+203:10.5'")
		}
		b.WriteString(tail)
		fmt.Fprintf(&b, "UNT+%d+1'UNZ+1+BIG1'", 2*lines+4+strings.Count(tail, "'"))
		return b.Bytes()
	}
	for name, c := range map[string]struct {
		data []byte
		want string // "" accepted, else the rule refused
	}{
		"total right": {big("MOA+79:31500'"), ""},
		"total wrong": {big("MOA+79:31501'"), RuleInvoicTotal},
		"bad date":    {big("DTM+137:20261131:102'"), RuleDates},
	} {
		var kept, streamed []string
		verdict := func(em *edifact.Message) string {
			if e := runBuiltins(em); e != nil {
				return e.name + ": " + e.msg
			}
			return ""
		}
		if _, err := edifact.Walk(c.data, nil, func(em *edifact.Message) error { kept = append(kept, verdict(em)); return nil }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := edifact.WalkViews(c.data, nil, func(em *edifact.Message, view []byte) error {
			if len(em.Segments) != 0 || view == nil {
				t.Fatalf("%s: %d segments kept", name, len(em.Segments))
			}
			streamed = append(streamed, verdict(em))
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(kept) != 1 || len(streamed) != 1 || kept[0] != streamed[0] || !strings.HasPrefix(kept[0], c.want) || (c.want == "") != (kept[0] == "") {
			t.Errorf("%s: over kept segments %q, over segments read again %q; want %q", name, kept, streamed, c.want)
		}
	}
}

package directory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// A large message whose segments the walk did not keep (edifact.WalkViews)
// is validated over its segments read again from the input: the same
// result as over kept segments, valid or with findings (a stray segment,
// an unknown code, a missing mandatory segment at the end).
func TestValidateOverSegmentsNotKept(t *testing.T) {
	v, err := NewValidator(builtin(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	big := func(line, tail string) []byte {
		var b strings.Builder
		b.WriteString(unb + "UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'DTM+137:20200101:102'")
		const lines = 2500 // over the 2 048 segments WalkViews keeps
		for range lines {
			b.WriteString(line)
		}
		b.WriteString(tail)
		fmt.Fprintf(&b, "UNT+%d+1'UNZ+1+1'", 3+lines*strings.Count(line, "'")+strings.Count(tail, "'")+1)
		return []byte(b.String())
	}
	for name, data := range map[string][]byte{
		"valid":    big("LIN+1++4000862141404:SRS'QTY+47:1'", "UNS+S'MOA+79:1'"),
		"stray":    big("LIN+1++4000862141404:SRS'QTY+47:1'", "UNS+S'ZZZ+1'MOA+79:1'"),
		"bad code": big("LIN+1++4000862141404:SRS'QTY+999:1'", "UNS+S'MOA+79:1'"),
		"no UNS":   big("LIN+1++4000862141404:SRS'QTY+47:1'", "MOA+79:1'"),
	} {
		var kept, streamed []string
		result := func(m *edifact.Message) string {
			r := v.Validate(m)
			return fmt.Sprintf("validated %v truncated %v findings %+v", r.Validated, r.Truncated, r.Findings)
		}
		if _, err := edifact.Walk(data, nil, func(m *edifact.Message) error { kept = append(kept, result(m)); return nil }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := edifact.WalkViews(data, nil, func(m *edifact.Message, _ []byte) error {
			if len(m.Segments) != 0 {
				t.Fatalf("%s: %d segments kept", name, len(m.Segments))
			}
			streamed = append(streamed, result(m))
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.HasPrefix(kept[0], "validated true") {
			t.Errorf("%s: not validated: %.300s", name, kept[0])
		}
		if len(kept) != 1 || len(streamed) != 1 || kept[0] != streamed[0] {
			t.Errorf("%s:\n kept     %.600s\n streamed %.600s", name, kept, streamed)
		}
		if name != "valid" && strings.Contains(kept[0], "findings []") {
			t.Errorf("%s: no finding: %.300s", name, kept[0])
		}
	}
}

package partner

import (
	"slices"
	"strings"
	"testing"
)

// TestFreeTextCutsBetweenWords is item 13's FTX: APERAK FTX C108 carries
// at most five 4440 values of an..70 each (UNTDID D.96A, FTX C108 "Text
// literal", 4440 an..70, five occurrences); a rule's message longer than
// 70 is cut after the last space that fits, never inside a word, and the
// space is not carried into the next value. Only a word longer than 70
// (nothing else fits) is cut where it must be.
func TestFreeTextCutsBetweenWords(t *testing.T) {
	long := strings.Repeat("X", 75)
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"fits", "total mismatch", []string{"total mismatch"}},
		{"exactly 70", strings.Repeat("a", 70), []string{strings.Repeat("a", 70)}},
		// the 70th character is inside "amounts": the cut is before it
		{"cut at the last space", "rule builtin:invoic-line-total failed: INVOIC 1: the 2 line amounts (MOA 203) sum to 132.80",
			[]string{"rule builtin:invoic-line-total failed: INVOIC 1: the 2 line amounts", "(MOA 203) sum to 132.80"}},
		// a space exactly at 71 still lets the 70 characters before it stand
		{"space right after 70", strings.Repeat("b", 70) + " next", []string{strings.Repeat("b", 70), "next"}},
		{"word longer than 70", long + " end", []string{long[:70], "XXXXX end"}},
		{"control characters", "a\tb\x00c", []string{"a.b.c"}},
		{"five values at most", strings.Repeat(strings.Repeat("w", 69)+" ", 7), slices.Repeat([]string{strings.Repeat("w", 69)}, 5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := freeText(c.in)
			if !slices.Equal(got, c.want) {
				t.Fatalf("freeText(%q) = %q, want %q", c.in, got, c.want)
			}
			for i, v := range got {
				if len(v) > 70 {
					t.Errorf("value %d is %d long, over 4440 an..70", i, len(v))
				}
			}
		})
	}
}

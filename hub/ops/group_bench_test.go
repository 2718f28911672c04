package ops

import (
	"fmt"
	"regexp"
	"testing"
	"time"
)

// Grouping 100 000 entries (the console's groups view works on its cache
// of them) and reading code and segment from one error text, each beside
// the plain alternative: a map by fingerprint alone, and regular
// expressions.
func BenchmarkGroupFailures(b *testing.B) {
	at := time.Now()
	entries := make([]Entry, 100_000)
	for i := range entries {
		msg := fmt.Sprintf(`schema: segment 4 UNT at line 1 col 101 (offset 100) element 1: UNT count 3 but message "M%d" has %d segments (code 29)`, i, 4+i%3)
		entries[i] = Entry{ID: fmt.Sprintf("DLQ:%d", i+1), Kind: "dlq", Stage: "parse", Cause: []string{"schema", "business"}[i%2],
			Partner: "ACME", Fingerprint: fmt.Sprintf("fp-%d", i%50), ErrorMsg: msg, Time: at}
		entries[i].ErrorCode, entries[i].ErrorSegment = ErrorDetail(msg)
	}
	b.Run("plain: by fingerprint", func(b *testing.B) {
		for b.Loop() {
			idx := map[string][]string{}
			for _, e := range entries {
				idx[e.Fingerprint] = append(idx[e.Fingerprint], e.ID)
			}
		}
	})
	b.Run("GroupFailures", func(b *testing.B) {
		for b.Loop() {
			_ = GroupFailures(entries)
		}
	})
}

var (
	reCode    = regexp.MustCompile(`code (\d+)\)[^)]*$`)
	reSegment = regexp.MustCompile(`segment \d+ ([A-Z0-9]{2,3}) at line `)
)

func BenchmarkErrorDetail(b *testing.B) {
	msg := `schema: segment 20 UNT at line 20 col 1 (offset 545) element 1 component 1: UNT count 21 but message "1" has 18 segments (code 29)`
	b.Run("plain: regexp", func(b *testing.B) {
		for b.Loop() {
			_ = reCode.FindStringSubmatch(msg)
			_ = reSegment.FindStringSubmatch(msg)
		}
	})
	b.Run("ErrorDetail", func(b *testing.B) {
		for b.Loop() {
			_, _ = ErrorDetail(msg)
		}
	})
}

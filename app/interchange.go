package app

import (
	"fmt"
	"time"
)

// SampleInterchange is a small valid INVOIC interchange with a unique
// control reference, for drills and benchmarks (our own text, no corpus).
func SampleInterchange(ref string, lines int) []byte {
	now := time.Now().UTC()
	b := fmt.Appendf(nil, "UNA:+.? 'UNB+UNOC:3+EDIHUB:ZZZ+PARTNER:ZZZ+%s:%s+%s'", now.Format("060102"), now.Format("1504"), ref)
	b = fmt.Appendf(b, "UNH+1+INVOIC:D:96A:UN'BGM+380+%s+9'DTM+137:%s:102'", ref, now.Format("20060102"))
	for i := 1; i <= lines; i++ {
		b = fmt.Appendf(b, "LIN+%d++4000862141404:SRS'QTY+47:%d'", i, i)
	}
	b = fmt.Appendf(b, "UNT+%d+1'UNZ+1+%s'", 4+2*lines, ref)
	return b
}

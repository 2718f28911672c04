package ops

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestErrorDetail(t *testing.T) {
	for _, c := range []struct{ msg, code, segment string }{
		{`schema: segment 20 UNT at line 20 col 1 (offset 545) element 1 component 1: UNT count 21 but message "1" has 18 segments (code 29)`, "29", "UNT"},
		{`schema: no interchange header: expected UNA, UNB or ISA, found "XYZ" (offset 0, code 22)`, "22", ""},
		// A quoted value that looks like a code or a segment is not read:
		// the code is the last one, the segment the error's own.
		{`schema: segment 3 BGM at line 1 col 9 (offset 40) element 2: value "(code 99) segment 7 ZZZ at line " too long (code 39)`, "39", "BGM"},
		{`schema: at line 1 col 1 (offset 0): expected an interchange header (UNA, UNB or ISA), found "GAR" (code 22)`, "22", ""},
		{"panic: runtime error: index out of range [3] with length 3", "", ""},
		{"validate: unknown article 4711", "", ""},
		{"schema: segment 2 unh at line 1 col 3 (offset 9): bad (code 22x)", "", ""},
		{"", "", ""},
	} {
		code, seg := ErrorDetail(c.msg)
		if code != c.code || seg != c.segment {
			t.Errorf("ErrorDetail(%q) = %q, %q; want %q, %q", c.msg, code, seg, c.code, c.segment)
		}
	}
}

// A partner's bad batch: 53 messages with 6 problems. UNT-count errors
// that differ only in the quoted message reference are one group, their
// fingerprints its sub-groups; errors without a code keep their
// fingerprint as the key.
func TestGroupFailuresBatch(t *testing.T) {
	at := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	var entries []Entry
	add := func(n int, stage, cause, fp, format string) {
		for i := 0; i < n; i++ {
			e := Entry{ID: fmt.Sprintf("DLQ:%d", len(entries)+1), Kind: "dlq", Stage: stage, Cause: cause, Partner: "ACME",
				ErrorMsg: fmt.Sprintf(format, i), Time: at.Add(time.Duration(len(entries)) * time.Second)}
			if fp != "" {
				e.Fingerprint = fp + fmt.Sprint(i%4)
			}
			e.ErrorCode, e.ErrorSegment = ErrorDetail(e.ErrorMsg)
			entries = append(entries, e)
		}
	}
	add(22, "parse", "schema", "unt", `schema: segment 9 UNT at line 9 col 1 (offset 300) element 1: UNT count 7 but message "M%d" has 8 segments (code 29)`)
	add(12, "parse", "schema", "hdr", `schema: no interchange header: expected UNA, UNB or ISA, found "J%d" (offset 0, code 22)`)
	add(8, "parse", "schema", "ref", `schema: segment 9 UNT at line 9 col 1 (offset 300) element 2: UNT reference "R%d" does not match UNH "X" (code 28)`)
	add(5, "parse", "schema", "char", `schema: segment 3 BGM at line 1 col 20 (offset 40) element 2: byte 'a' is outside the UNOA repertoire (ref %d) (code 21)`)
	add(4, "validate", "business", "art", `validate: unknown article %d`)
	add(2, "parse", "unknown", "", "timeout %d")
	groups := GroupFailures(entries)
	var got []string
	total := 0
	for _, g := range groups {
		got = append(got, fmt.Sprintf("%s=%d/%d", g.Key, g.Count, len(g.Subgroups)))
		total += len(g.IDs)
		sub := 0
		for _, sg := range g.Subgroups {
			sub += len(sg.IDs)
		}
		if sub != g.Count || len(g.IDs) != g.Count {
			t.Errorf("group %s: %d IDs, %d in sub-groups, count %d", g.Key, len(g.IDs), sub, g.Count)
		}
		// The group's filter selects exactly its messages.
		n := 0
		for _, e := range entries {
			if g.Filter.Matches(e, at.Add(time.Hour)) {
				n++
			}
		}
		if n != g.Count {
			t.Errorf("group %s: its filter %s selects %d, want %d", g.Key, g.Filter, n, g.Count)
		}
	}
	want := []string{"parse/schema/code 29/UNT=22/4", "parse/schema/code 22=12/4", "parse/schema/code 28/UNT=8/4",
		"parse/schema/code 21/BGM=5/4", "parse/unknown/(none)=2/1", "validate/business/art0=1/1", "validate/business/art1=1/1",
		"validate/business/art2=1/1", "validate/business/art3=1/1"}
	if strings.Join(got, " ") != strings.Join(want, " ") || total != 53 {
		t.Fatalf("groups (%d IDs):\n%s\nwant\n%s", total, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if f := groups[0].Filter.String(); f != "stage=parse,cause=schema,code=29,segment=UNT" {
		t.Fatalf("filter of the UNT group: %s", f)
	}
	if f, err := ParseFilter(groups[0].Filter.String()); err != nil || !reflect.DeepEqual(f, groups[0].Filter) {
		t.Fatalf("a group's filter does not read back: %+v %v", f, err)
	}
}

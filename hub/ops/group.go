package ops

import (
	"cmp"
	"sort"
	"strings"
	"time"
)

// Triage at batch size: a partner's bad batch makes dozens of dead letters
// whose error texts differ only in what they quote (a message reference,
// the bytes found instead of a header), so their fingerprints differ. A
// group is therefore the stage, the cause, the error code (UN/EDIFACT code
// list 0085, which the edifact package ends every error with) and the
// segment tag it names; the fingerprints are its sub-groups. An error
// without a code (a panic, a timeout, another stage's error) has only its
// fingerprint to say "the same failure", so it stays in the key.

// ErrorDetail reads the error code and the segment tag from an error text
// the hub stored ("schema: segment 20 UNT at line 20 col 1 (offset 545)
// element 1: ... (code 29)" gives "29", "UNT"). The code is the last
// "code N)" (the error ends with it; a quoted value comes before it), the
// tag the first "segment N TAG at" (the error starts with it). Either is
// "" when the text has none.
func ErrorDetail(msg string) (code, segment string) {
	if i := strings.LastIndex(msg, "code "); i >= 0 {
		d := digits(msg[i+5:])
		if d != "" && strings.HasPrefix(msg[i+5+len(d):], ")") {
			code = d
		}
	}
	if i := strings.Index(msg, "segment "); i >= 0 {
		rest := msg[i+8:]
		if d := digits(rest); d != "" && strings.HasPrefix(rest[len(d):], " ") {
			rest = rest[len(d)+1:]
			if tag, _, ok := strings.Cut(rest, " at line "); ok && validTag(tag) {
				segment = tag
			}
		}
	}
	return code, segment
}

func digits(s string) string {
	n := 0
	for n < len(s) && n < 6 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return s[:n]
}

// validTag: segment tags are 2 or 3 letters and digits (EDIFACT, X12).
func validTag(s string) bool {
	if len(s) < 2 || len(s) > 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Group is the messages that failed the same way, as ServicePulse groups
// failures: one decision for the lot. Filter selects exactly the group
// (within the filter it was grouped under); Subgroups are its fingerprints,
// largest first.
type Group struct {
	Key        string     `json:"key"` // stage/cause/code/segment, or stage/cause/fingerprint without a code
	Stage      string     `json:"stage"`
	Cause      string     `json:"cause"`
	Code       string     `json:"error_code,omitempty"`
	Segment    string     `json:"error_segment,omitempty"`
	Filter     Filter     `json:"filter"`
	Count      int        `json:"count"`
	ErrorClass string     `json:"error_class,omitempty"`
	Sample     string     `json:"sample_error,omitempty"`
	Kinds      []string   `json:"kinds"`
	Partners   []string   `json:"partners"`
	First      time.Time  `json:"first"`
	Last       time.Time  `json:"last"`
	IDs        []string   `json:"ids"`
	Subgroups  []Subgroup `json:"subgroups"`
}

// Subgroup is one fingerprint of a group: the error texts that are the
// same but for numbers, addresses and quoted bytes.
type Subgroup struct {
	Fingerprint string   `json:"fingerprint"`
	Count       int      `json:"count"`
	Sample      string   `json:"sample_error,omitempty"`
	IDs         []string `json:"ids"`
}

// NoFingerprint is the sub-group of messages stored without a
// fingerprint (poison from a crash).
const NoFingerprint = "(none)"

// GroupFailures groups entries by stage, cause, error code and segment
// tag, largest group first (ties by key), each with its fingerprints as
// sub-groups and all its IDs in stream order.
func GroupFailures(entries []Entry) []Group {
	// Struct keys: no string is built per entry, only per group.
	type groupKey struct{ stage, cause, code, segment, fingerprint string }
	type subKey struct {
		group       int
		fingerprint string
	}
	idx, subIdx := map[groupKey]int{}, map[subKey]int{}
	var out []Group
	for _, e := range entries {
		fp := cmp.Or(e.Fingerprint, NoFingerprint)
		k := groupKey{stage: e.Stage, cause: e.Cause, code: e.ErrorCode, segment: e.ErrorSegment}
		if e.ErrorCode == "" {
			k.segment, k.fingerprint = "", fp
		}
		i, ok := idx[k]
		if !ok {
			f := Filter{Stage: e.Stage, Cause: e.Cause}
			key := e.Stage + "/" + e.Cause + "/"
			if e.ErrorCode != "" {
				f.Code, f.Segment = e.ErrorCode, e.ErrorSegment
				key += "code " + e.ErrorCode
				if e.ErrorSegment != "" {
					key += "/" + e.ErrorSegment
				}
			} else {
				f.Fingerprint = e.Fingerprint
				key += fp
			}
			i = len(out)
			idx[k] = i
			out = append(out, Group{Key: key, Stage: e.Stage, Cause: e.Cause, Code: e.ErrorCode, Segment: e.ErrorSegment, Filter: f,
				ErrorClass: e.ErrorClass, Sample: e.ErrorMsg, First: e.Time, Last: e.Time})
		}
		g := &out[i]
		g.Count++
		g.Kinds, g.Partners = addOnce(g.Kinds, e.Kind), addOnce(g.Partners, e.Partner)
		if e.Time.Before(g.First) {
			g.First = e.Time
		}
		if e.Time.After(g.Last) {
			g.Last = e.Time
		}
		g.IDs = append(g.IDs, e.ID)
		j, ok := subIdx[subKey{i, fp}]
		if !ok {
			j = len(g.Subgroups)
			subIdx[subKey{i, fp}] = j
			g.Subgroups = append(g.Subgroups, Subgroup{Fingerprint: fp, Sample: e.ErrorMsg})
		}
		g.Subgroups[j].Count++
		g.Subgroups[j].IDs = append(g.Subgroups[j].IDs, e.ID)
	}
	for i := range out {
		sort.SliceStable(out[i].Subgroups, func(a, b int) bool { return out[i].Subgroups[a].Count > out[i].Subgroups[b].Count })
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Key < out[j].Key
	})
	return out
}

func addOnce(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

package edifact

// Segment is one segment as the Reader returns it. Tag is the segment tag;
// Elements are the data elements after the tag, in order (Elements[0] is the
// element at position 1 in EDIFACT terms).
type Segment struct {
	Tag      string
	Elements []Element
	Offset   int64 // byte offset of the tag's first byte in the input
	Line     int   // 1-based line of Offset
	Column   int   // 1-based byte column of Offset
	Number   int   // 1-based position in the stream, UNA not counted
}

// Element is one data element: its components (a simple data element has
// one), and further occurrences when the syntax version 4 repetition
// separator was used (nil otherwise).
type Element struct {
	Components []string
	Repeats    [][]string
}

// Value returns component c (1-based) of element e (1-based) of the first
// occurrence, or "" when the segment is shorter. It never panics.
func (s *Segment) Value(e, c int) string {
	if e < 1 || e > len(s.Elements) {
		return ""
	}
	comps := s.Elements[e-1].Components
	if c < 1 || c > len(comps) {
		return ""
	}
	return comps[c-1]
}

// clone returns a deep copy of s that does not alias the Reader's buffers.
// Strings are immutable, so only the slices need copying.
func (s *Segment) clone() Segment {
	out := *s
	out.Elements = make([]Element, len(s.Elements))
	n := 0
	for _, e := range s.Elements {
		n += len(e.Components)
	}
	comps := make([]string, 0, n)
	for i, e := range s.Elements {
		start := len(comps)
		comps = append(comps, e.Components...)
		out.Elements[i].Components = comps[start:len(comps):len(comps)]
		if e.Repeats != nil {
			reps := make([][]string, len(e.Repeats))
			for j, r := range e.Repeats {
				reps[j] = append([]string(nil), r...)
			}
			out.Elements[i].Repeats = reps
		}
	}
	return out
}

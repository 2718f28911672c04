package edifact

// Segment is one segment as the Reader returns it. Tag is the segment tag;
// Elements are the data elements after the tag, in order, each a list of its
// components (a simple data element has one): Elements[0] is the element at
// position 1 in EDIFACT terms, so seg.Elements[1][0] of "NAD+BY+123::9" is "123".
type Segment struct {
	Tag      string
	Elements [][]string
	// Repeats holds the second and later occurrences of data elements that
	// used the repetition separator (syntax version 4 only); usually nil.
	Repeats []Repeat
	Offset  int64 // byte offset of the tag's first byte in the input
	Line    int   // 1-based line of Offset
	Column  int   // 1-based byte column of Offset
	Number  int   // 1-based position in the stream, UNA not counted
}

// Repeat lists the further occurrences of one repeated data element: for
// "ATT+2++M*F" Elements[2] is ["M"] and Repeats is [{3, [["F"]]}].
type Repeat struct {
	Element     int        // 1-based position of the element
	Occurrences [][]string // second and later occurrences, each its components
}

// Value returns component c (1-based) of element e (1-based), first
// occurrence, or "" when the segment is shorter. It never panics.
func (s *Segment) Value(e, c int) string {
	if e < 1 || e > len(s.Elements) {
		return ""
	}
	comps := s.Elements[e-1]
	if c < 1 || c > len(comps) {
		return ""
	}
	return comps[c-1]
}

// Clone returns a deep copy of s that does not alias the Reader's buffers,
// for callers that keep segments while using ReuseSegment. Strings are
// immutable, so only the slices are copied.
func (s *Segment) Clone() Segment {
	out := *s
	out.Elements = make([][]string, len(s.Elements))
	n := 0
	for _, e := range s.Elements {
		n += len(e)
	}
	comps := make([]string, 0, n)
	for i, e := range s.Elements {
		start := len(comps)
		comps = append(comps, e...)
		out.Elements[i] = comps[start:len(comps):len(comps)]
	}
	if s.Repeats != nil {
		out.Repeats = make([]Repeat, len(s.Repeats))
		for i, r := range s.Repeats {
			occ := make([][]string, len(r.Occurrences))
			for j, o := range r.Occurrences {
				occ[j] = append([]string(nil), o...)
			}
			out.Repeats[i] = Repeat{Element: r.Element, Occurrences: occ}
		}
	}
	return out
}

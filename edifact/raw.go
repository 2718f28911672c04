package edifact

// RawSegment is a segment as ReadRaw returns it: its components as byte
// slices of the Reader's buffers (release characters removed), valid only
// until the next call to Read or ReadRaw. Nothing is copied or allocated per
// segment; a string is made only when Value is called.
type RawSegment struct {
	r      *Reader
	Offset int64 // byte offset of the tag's first byte in the input
	Line   int   // 1-based line of Offset
	Column int   // 1-based byte column of Offset
	Number int   // 1-based position in the stream, UNA not counted
}

// ReadRaw is Read without strings: the same checks, errors and positions,
// but the segment is a view of the Reader's buffers (see RawSegment). It is
// the fast path for callers that look at a few values of each segment.
func (r *Reader) ReadRaw() (*RawSegment, error) {
	// The common case first, without the calls of next and read.
	if r.scanning() {
		if n, ok := r.scanSegment(r.win[r.winPos:]); ok {
			r.winPos += n
			r.num++
			r.afterScan()
			return r.rawSegment(), nil
		}
	}
	r.wantStrings = false
	if err := r.next(); err != nil {
		return nil, err
	}
	return r.rawSegment(), nil
}

func (r *Reader) rawSegment() *RawSegment {
	s := &r.raw1
	start := r.segAt
	s.r, s.Offset, s.Line, s.Column, s.Number = r, r.BaseOffset+start, r.segLine, int(start-r.segLineStart)+1, r.num
	return s
}

// Tag returns the segment tag.
func (s *RawSegment) Tag() []byte { return s.r.rawValue(0, 1) }

// Len returns the number of data elements after the tag (repetitions not
// counted), like len(Segment.Elements).
func (s *RawSegment) Len() int {
	if s.r.scanned {
		return len(s.r.ends) - 1
	}
	n := len(s.r.elemOcc) - 1
	if s.r.bin != nil {
		n++
	}
	return n
}

// Components returns the number of components of element e (1-based, first
// occurrence), 0 when the segment is shorter.
func (s *RawSegment) Components(e int) int {
	r := s.r
	if r.scanned {
		if e < 1 || e >= len(r.ends) {
			return 0
		}
		return int(r.ends[e] - r.ends[e-1])
	}
	if e < 1 || e >= len(r.elemOcc) {
		if e >= 1 && e == s.Len() && r.bin != nil {
			return 1
		}
		return 0
	}
	o := r.occs[r.elemOcc[e]]
	return int(o.end - o.start)
}

// Bytes returns component c of element e (both 1-based, first occurrence),
// or nil when the segment is shorter, like Segment.Value without a copy.
func (s *RawSegment) Bytes(e, c int) []byte {
	if e < 1 {
		return nil
	}
	return s.r.rawValue(e, c)
}

// Value returns component c of element e as a new string, "" when the
// segment is shorter: the same as Segment.Value.
func (s *RawSegment) Value(e, c int) string { return string(s.Bytes(e, c)) }

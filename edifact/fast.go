package edifact

import "unsafe"

// The one-pass scan. Most segments are plain: no release character, no
// control character, within the limits, whole in the read buffer. For
// those, fastSegment finds the terminator and the separators in a single
// pass over the bytes in br's buffer (fcls holds the terminator too), with
// the bookkeeping of tokenizeSpans, and without bufio.ReadSlice's own pass
// or a copy. Anything else (a release character, a control character, a
// segment cut by the end of the buffer, a limit exceeded, a bad tag, UNA,
// X12 BIN) makes it give up before it has changed any state, and the
// segment is read again by segment() and its tokenizers, which report the
// error exactly as before. FuzzReader checks that a Reader with the scan
// and one without agree on every segment and error.

// fastSeparators reports whether the one-pass scan can run with s: the
// terminator is a byte of its own, and neither it nor a separator is CR or
// LF (which the scan skips between segments and counts as lines).
func fastSeparators(s Separators) bool {
	t := s.Segment
	if t == 0 || t == '\n' || t == '\r' || t == s.Component || t == s.Element ||
		(s.Repetition != 0 && t == s.Repetition) || (s.Release != 0 && t == s.Release) {
		return false
	}
	for _, c := range []byte{s.Component, s.Element, s.Repetition, s.Release} {
		if c == '\n' || c == '\r' {
			return false
		}
	}
	return true
}

// sync discards from br what the scan consumed, so that br can be used.
func (r *Reader) sync() {
	if r.winPos > 0 {
		r.br.Discard(r.winPos)
	}
	r.win, r.winPos = nil, 0
}

// fastSegment reads the next segment by the one-pass scan. ok is false
// when it gave up (nothing read, nothing changed but the window); err is
// set only by build, for Read.
func (r *Reader) fastSegment() (ok bool, err error) {
	n, ok := r.scanSegment(r.win[r.winPos:])
	if !ok {
		if r.winPos == 0 && len(r.win) > 0 {
			return false, nil // the window is fresh: the segment is not plain
		}
		r.sync()
		r.win, _ = r.br.Peek(r.br.Buffered())
		if n, ok = r.scanSegment(r.win); !ok {
			return false, nil
		}
	}
	r.winPos += n
	if !r.wantStrings {
		r.afterScan()
		return true, nil
	}
	r.out, err = r.stringsFromSpans()
	return true, err
}

// scanSegment scans one plain segment at the start of p, after any CR and
// LF, and returns the bytes consumed (with the terminator). The segment is
// kept in the scan's own form (r.scanned): seps holds the position of every
// separator and of the terminator, so that component k ends at seps[k] and
// starts after seps[k-1]; ends holds, per element, the number of components
// up to its end. That is one store per separator and one per element, all
// in one loop with few live values. A repetition separator is left to
// tokenizeSpans (it is rare, and its occurrences need more bookkeeping).
func (r *Reader) scanSegment(p []byte) (int, bool) {
	i := 0
	for i < len(p) && p[i] <= '\r' && (p[i] == '\n' || p[i] == '\r') {
		i++
	}
	body := p[i:]
	if m := r.MaxSegmentLen; m > 0 && len(body) > m {
		body = body[:m] // the terminator must be within the limit
	}
	if !r.scanBody(body) {
		return 0, false
	}
	// The checks and the state of the segment scanBody found; j and the
	// rest are read back from r.seps and r.ends, so that scanBody's loop
	// keeps its values in registers.
	seps, ends := r.seps, r.ends
	j := int(seps[len(seps)-1])
	if m := r.MaxElementLen; m > 0 && j > m && !elementsFit(seps, ends, int32(m)) {
		return 0, false
	}
	body = body[:j]
	// The tag: no components, three letters or digits (two also in X12),
	// not UNA (an error) nor an X12 BIN (binary data follows).
	if ends[0] != 1 {
		return 0, false
	}
	switch tag := body[:seps[0]]; len(tag) {
	case 3:
		if !tagChar[tag[0]] || !tagChar[tag[1]] || !tagChar[tag[2]] ||
			(tag[0] == 'U' && tag[1] == 'N' && tag[2] == 'A' && r.std == EDIFACT) ||
			(tag[0] == 'B' && tag[1] == 'I' && tag[2] == 'N' && r.std == X12) {
			return 0, false
		}
	case 2:
		if r.std != X12 || !tagChar[tag[0]] || !tagChar[tag[1]] {
			return 0, false
		}
	default:
		return 0, false
	}
	// r.cur and r.raw are left alone: only the segment-by-segment path
	// reads them, after mark() has reset them.
	start := r.off + int64(i)
	for k := 0; k < i; k++ { // the CR and LF before the segment
		if p[k] == '\n' {
			r.line++
			r.lineStart = r.off + int64(k) + 1
		}
	}
	r.segStart, r.segLine, r.segLineStart = start, r.line, r.lineStart
	r.text, r.segAt, r.scanned = body, start, true
	if r.bin != nil {
		r.bin = nil
	}
	r.off = start + int64(j) + 1
	return i + j + 1, true
}

// scanBody finds the separators and the terminator of the plain segment
// at the start of body into r.seps and r.ends. It is a function of its own
// so that the byte loop keeps its values in registers.
//
// seps and ends are written by index, never grown inside the loop (a call
// there would push j out of its register): a segment has at most one
// separator per byte, so the scan looks at no more bytes than seps has
// room for, and a segment too long for it grows seps for the next time and
// goes to the segment-by-segment path.
func (r *Reader) scanBody(body []byte) bool {
	if cap(r.seps) < scanFirst {
		r.seps, r.ends = make([]int32, scanFirst), make([]int32, scanFirst)
	}
	seps, ends := r.seps[:cap(r.seps)], r.ends[:cap(r.seps)]
	if len(body) >= len(seps) {
		body = body[:len(seps)-1]
	}
	j, ns, ne := 0, 0, 0
	var k uint8
	for {
		for j < len(body) && r.fcls[body[j]] == clsText {
			j++
		}
		if j >= len(body) {
			if len(body) == len(seps)-1 && len(seps) < scanMax {
				r.seps, r.ends = make([]int32, 2*len(seps)), make([]int32, 2*len(seps))
			}
			return false
		}
		if k = r.fcls[body[j]]; k > clsElem {
			break
		}
		seps[ns] = int32(j)
		ns++
		if k == clsElem {
			ends[ne] = int32(ns)
			ne++
		}
		j++
	}
	if k != clsSeg {
		return false // a repetition, release or control character
	}
	seps[ns] = int32(j)
	ends[ne] = int32(ns + 1)
	r.seps, r.ends = seps[:ns+1], ends[:ne+1]
	return true
}

// scanFirst is the room a Reader's scan starts with; it doubles when a
// segment needs more, up to scanMax (longer segments, rare, are read by
// the segment-by-segment path).
const (
	scanFirst = 256
	scanMax   = 16 << 10
)

// elementsFit reports whether every element of a scanned segment is at
// most m bytes long, as tokenizeSpans measures them.
func elementsFit(seps, ends []int32, m int32) bool {
	start := int32(0)
	for _, e := range ends {
		end := seps[e-1]
		if end-start > m {
			return false
		}
		start = end + 1
	}
	return true
}

// scannedValue is rawValue for a scanned segment.
func (r *Reader) scannedValue(e, c int) []byte {
	if e < 0 || e >= len(r.ends) {
		return nil
	}
	first := int32(0)
	if e > 0 {
		first = r.ends[e-1]
	}
	if c < 1 || int32(c) > r.ends[e]-first {
		return nil
	}
	idx := first + int32(c) - 1
	start := int32(0)
	if idx > 0 {
		start = r.seps[idx-1] + 1
	}
	return r.text[start:r.seps[idx]]
}

// scanning reports whether the next segment may be read by the scan.
func (r *Reader) scanning() bool { return r.inside && r.fast && r.err == nil && !r.noFast }

// afterScan is afterSpans for a scanned segment: only UNB (the header's
// own) and the interchange trailer change the state, and both start with
// U or I.
func (r *Reader) afterScan() {
	if c := r.text[0]; c == 'U' || c == 'I' {
		r.afterSpans(r.text[:r.seps[0]])
	}
}

// stringsFromSpans is Read's end of the scan: the body is copied into the
// string arena at once and each component becomes a string into it, in the
// checker's slabs (r.keep) or the Reader's reused slices (ReuseSegment) or
// new ones.
func (r *Reader) stringsFromSpans() (*Segment, error) {
	body := r.text
	buf := append(r.arenaFor(len(body)), body...)
	r.arena = r.arena[:len(r.arena)+len(body)]
	base := unsafe.Pointer(unsafe.SliceData(buf))
	var all []string
	var elems [][]string
	switch {
	case r.keep != nil:
		all, elems = r.keep.strings(len(r.seps)), r.keep.elements(len(r.ends))
	case r.ReuseSegment:
		if cap(r.comps) < len(r.seps) {
			r.comps = make([]string, 0, 2*len(r.seps))
		}
		if cap(r.elems) < len(r.ends) {
			r.elems = make([][]string, 0, 2*len(r.ends))
		}
		all, elems = r.comps[:0], r.elems[:0]
	default:
		all, elems = make([]string, 0, len(r.seps)), make([][]string, 0, len(r.ends))
	}
	// Written by index into slices of the final length: no growth check
	// per value.
	seps, ends := r.seps, r.ends
	all, elems = all[:len(seps)], elems[:len(ends)]
	start := int32(0)
	for k, e := range seps {
		if e > start {
			all[k] = unsafe.String((*byte)(unsafe.Add(base, start)), e-start)
		} else {
			all[k] = "" // never a pointer past the copy (checkptr)
		}
		start = e + 1
	}
	prev := int32(0)
	for k, e := range ends {
		elems[k] = all[prev:e:e]
		prev = e
	}
	if r.ReuseSegment && r.keep == nil {
		r.comps, r.elems = all, elems
	}
	seg := &r.seg
	if !r.ReuseSegment && r.keep == nil {
		seg = new(Segment)
	}
	start64 := r.segAt
	seg.Tag, seg.Elements, seg.Repeats = all[0], elems[1:], nil
	seg.Offset, seg.Line, seg.Column = r.BaseOffset+start64, r.segLine, int(start64-r.segLineStart)+1
	r.afterSegment(seg)
	return seg, nil
}

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
// LF. On success it fills the tokenizer's state as tokenizeSpans does and
// returns the bytes consumed (with the terminator).
func (r *Reader) scanSegment(p []byte) (int, bool) {
	i := 0
	line, lineStart := r.line, r.lineStart
	for i < len(p) && (p[i] == '\n' || p[i] == '\r') {
		if p[i] == '\n' {
			line++
			lineStart = r.off + int64(i) + 1
		}
		i++
	}
	body := p[i:]
	if m := r.MaxSegmentLen; m > 0 && len(body) > m {
		body = body[:m] // the terminator must be within the limit
	}
	cls := &r.fcls
	spans, occs, elemOcc := r.spans[:0], r.occs[:0], r.elemOcc[:0]
	compStart, occStart, elemStart := 0, 0, 0
	repeated := false
	maxElem := r.MaxElementLen
	n := len(body)
	j := 0
	for ; ; j++ {
		for j < n && cls[body[j]] == clsText {
			j++
		}
		if j >= n {
			return 0, false
		}
		k := cls[body[j]]
		if k >= clsRel && k != clsSeg {
			return 0, false
		}
		spans = append(spans, span{int32(compStart), int32(j)})
		compStart = j + 1
		if k == clsComp {
			continue
		}
		if !repeated {
			elemOcc = append(elemOcc, int32(len(occs)))
		}
		occs = append(occs, occ{start: int32(occStart), end: int32(len(spans)), rep: repeated})
		occStart = len(spans)
		repeated = k == clsRep
		if repeated {
			continue
		}
		if maxElem > 0 && j-elemStart > maxElem {
			return 0, false
		}
		if k == clsSeg {
			break
		}
		elemStart = j + 1
	}
	// Keep what was grown for the next segment, whatever the verdict.
	r.spans, r.occs, r.elemOcc = spans, occs, elemOcc
	tag := body[spans[0].start:spans[0].end]
	if occs[0].end > 1 || (len(occs) > 1 && occs[1].rep) || !goodTag(r.std, tag) {
		return 0, false
	}
	if len(tag) == 3 && ((tag[0] == 'U' && tag[1] == 'N' && tag[2] == 'A' && r.std == EDIFACT) ||
		(tag[0] == 'B' && tag[1] == 'I' && tag[2] == 'N' && r.std == X12)) {
		return 0, false
	}
	// r.cur and r.raw are left alone: only the segment-by-segment path
	// reads them, after mark() has reset them.
	start := r.off + int64(i)
	if i > 0 {
		r.line, r.lineStart = line, lineStart
	}
	r.segStart, r.segLine, r.segLineStart = start, line, lineStart
	r.text, r.bin, r.segAt = body[:j], nil, start
	r.off = start + int64(j) + 1
	return i + j + 1, true
}

// scanning reports whether the next segment may be read by the scan.
func (r *Reader) scanning() bool { return r.inside && r.fast && r.err == nil && !r.noFast }

// afterScan is afterSpans for a scanned segment: only UNB (the header's
// own) and the interchange trailer change the state, and both start with
// U or I.
func (r *Reader) afterScan() {
	if c := r.text[0]; c == 'U' || c == 'I' {
		sp := r.spans[0]
		r.afterSpans(r.text[sp.start:sp.end])
	}
}

// stringsFromSpans is Read's end of the scan: the body is copied into the
// string arena at once and each component becomes a string into it.
func (r *Reader) stringsFromSpans() (*Segment, error) {
	body := r.text
	buf := append(r.arenaFor(len(body)), body...)
	r.arena = r.arena[:len(r.arena)+len(body)]
	base := unsafe.Pointer(unsafe.SliceData(buf))
	comps := r.comps[:0]
	if r.keep != nil { // straight into the checker's slabs
		comps = r.keep.strings(len(r.spans))
	}
	for _, sp := range r.spans {
		if sp.end > sp.start {
			comps = append(comps, unsafe.String((*byte)(unsafe.Add(base, sp.start)), sp.end-sp.start))
		} else {
			comps = append(comps, "")
		}
	}
	if r.keep != nil {
		return r.assemble(r.segAt, comps, r.keep.elements(len(r.occs)))
	}
	r.comps = comps
	return r.build(r.segAt)
}

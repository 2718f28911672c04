package edifact

import (
	"errors"
	"fmt"
)

// span is one component: text[start:end] of the segment being read.
type span struct{ start, end int32 }

// tokenizeSpans is the tokenizer of ReadRaw: it splits one segment (without
// its terminator) in one pass, checks its tag and updates the interchange
// state, recording spans only. The text is the body itself (a segment with a
// release character goes to tokenizeReleased) and no string is made. The
// scan for the next separator is inline, one table lookup per byte:
// components average under 8 bytes, and a call per run (scanText) cost 6%
// more instructions here.
func (r *Reader) tokenizeSpans(body []byte, cls *[256]uint8, start int64) error {
	r.cur, r.bin, r.segAt = body, nil, start
	spans, occs, elemOcc := r.spans[:0], r.occs[:0], r.elemOcc[:0]
	compStart, occStart := 0, 0
	repeated := false
	elemStart, elemNo, compNo := 0, 0, 1
	maxElem := r.MaxElementLen
	n := len(body)
	for j := 0; ; j++ {
		for j < n && cls[body[j]] == clsText {
			j++
		}
		k := uint8(clsElem) // the end of the body ends the last element
		if j < n {
			k = cls[body[j]]
		}
		switch k {
		case clsRel:
			return r.tokenizeReleased(body, cls, start)
		case clsCtrl:
			return r.ctrlErr(body, cls, start, j, elemNo, compNo)
		}
		spans = append(spans, span{int32(compStart), int32(j)})
		compStart = j + 1
		if k == clsComp {
			compNo++
			continue
		}
		if !repeated {
			elemOcc = append(elemOcc, int32(len(occs)))
		}
		occs = append(occs, occ{start: int32(occStart), end: int32(len(spans)), rep: repeated})
		occStart = len(spans)
		repeated = k == clsRep
		if k == clsRep {
			compNo++
			continue
		}
		if maxElem > 0 && j-elemStart > maxElem {
			pe := r.errAt(start+int64(elemStart), tagOf(body, cls), CodeTooLong,
				fmt.Errorf("data element is %d bytes, longer than %d", j-elemStart, maxElem))
			pe.Element = elemNo
			return pe
		}
		if j >= n {
			break
		}
		elemStart, elemNo, compNo = j+1, elemNo+1, 1
	}
	r.text = body
	r.spans, r.occs, r.elemOcc, r.scanned = spans, occs, elemOcc, false
	return r.checkTag(start)
}

// tokenizeReleased is tokenizeSpans for a segment with release characters: the
// text is then built in r.unrel without them. The bookkeeping at a separator
// is the same as in tokenizeSpans, written out twice on purpose: as a call
// per component it cost the hot path several percent (FuzzReader checks that
// both agree with Read on every segment). It starts again from the
// segment's first byte, so errors come in the same order as in tokenizeSpans.
func (r *Reader) tokenizeReleased(body []byte, cls *[256]uint8, start int64) error {
	r.cur, r.bin, r.segAt = body, nil, start
	spans, occs, elemOcc := r.spans[:0], r.occs[:0], r.elemOcc[:0]
	var buf []byte // the text being built, once a release character was seen
	copying := false
	compStart, occStart := 0, 0
	repeated := false
	elemStart, elemNo, compNo := 0, 0, 1
	maxElem := r.MaxElementLen
	for i := 0; ; {
		j := i + scanText(body[i:], cls)
		pos := j // where the run ends in the text
		if copying {
			buf = append(buf, body[i:j]...)
			pos = len(buf)
		}
		k := uint8(clsElem) // the end of the body ends the last element
		if j < len(body) {
			k = cls[body[j]]
		}
		switch k {
		case clsRel:
			// The segment reader stops only at an unreleased terminator, so
			// a release character always has a next byte here.
			if j+1 >= len(body) {
				return r.errAt(start+int64(j), tagOf(body, cls), CodeInvalidServiceChar,
					errors.New("release character at the end of the segment"))
			}
			n := body[j+1]
			if cls[n] == clsCtrl {
				return r.ctrlErr(body, cls, start, j+1, elemNo, compNo)
			}
			if !copying { // the text so far is body[:j], positions unchanged
				copying = true
				buf = append(r.unrel[:0], body[:j]...)
			}
			// Releasing an ordinary character is tolerated: the character stays.
			buf = append(buf, n)
			i = j + 2
			continue
		case clsCtrl:
			return r.ctrlErr(body, cls, start, j, elemNo, compNo)
		}
		// A component ends here (k is clsComp, clsRep or clsElem).
		spans = append(spans, span{int32(compStart), int32(pos)})
		compStart = pos + 1
		if copying { // separators are not copied
			compStart = pos
		}
		i = j + 1
		if k == clsComp {
			compNo++
			continue
		}
		if !repeated {
			elemOcc = append(elemOcc, int32(len(occs)))
		}
		occs = append(occs, occ{start: int32(occStart), end: int32(len(spans)), rep: repeated})
		occStart = len(spans)
		repeated = k == clsRep
		if k == clsRep {
			compNo++
			continue
		}
		if maxElem > 0 && j-elemStart > maxElem {
			pe := r.errAt(start+int64(elemStart), tagOf(body, cls), CodeTooLong,
				fmt.Errorf("data element is %d bytes, longer than %d", j-elemStart, maxElem))
			pe.Element = elemNo
			return pe
		}
		if j >= len(body) {
			break
		}
		elemStart, elemNo, compNo = j+1, elemNo+1, 1
	}
	r.text = body
	if copying {
		r.text, r.unrel = buf, buf
	}
	r.spans, r.occs, r.elemOcc, r.scanned = spans, occs, elemOcc, false
	return r.checkTag(start)
}

// checkTag checks the tag of the tokenized segment (no components, no
// repetition, the right characters) and updates the interchange state.
func (r *Reader) checkTag(start int64) error {
	sp := r.spans[0] // the tag is the first component of the first occurrence
	tag := r.text[sp.start:sp.end]
	if r.occs[0].end > 1 || (len(r.occs) > 1 && r.occs[1].rep) {
		return r.errAt(start, string(tag), CodeTooManyConstituents,
			errors.New("segment tag has components or repetitions"))
	}
	if !goodTag(r.std, tag) {
		return r.errAt(start, string(tag), CodeInvalidValue, errors.New(r.badTag(string(tag))))
	}
	r.afterSpans(tag)
	return nil
}

// rawValue returns component c (1-based) of element e (0 is the tag) of the
// tokenized segment, first occurrence, or nil.
func (r *Reader) rawValue(e, c int) []byte {
	if r.scanned {
		return r.scannedValue(e, c)
	}
	if e < 0 || e >= len(r.elemOcc) {
		if e == len(r.elemOcc) && c == 1 && r.bin != nil {
			return r.bin
		}
		return nil
	}
	o := r.occs[r.elemOcc[e]]
	if c < 1 || int32(c) > o.end-o.start {
		return nil
	}
	sp := r.spans[o.start+int32(c)-1]
	return r.text[sp.start:sp.end]
}

// afterSpans is afterSegment for ReadRaw.
func (r *Reader) afterSpans(tag []byte) {
	switch {
	case len(tag) == 3 && tag[0] == 'U' && tag[1] == 'N' && tag[2] == 'B' && r.pendingUNB:
		r.pendingUNB = false
		r.syntax = string(r.rawValue(1, 1))
		if string(r.rawValue(1, 2)) == "4" && r.repIfV4 != 0 {
			r.sep.Repetition = r.repIfV4
		}
		r.setClasses()
	case len(tag) == len(r.endTag) && len(tag) > 0 && tag[0] == r.endTag[0] && string(tag) == r.endTag:
		r.inside = false
	}
}

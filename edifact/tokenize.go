package edifact

import (
	"bytes"
	"errors"
	"fmt"
	"unsafe"
)

// mark records where the segment being read starts, for positions of errors.
func (r *Reader) mark() {
	r.segStart, r.segLine, r.segLineStart = r.off, r.line, r.lineStart
	r.raw = r.raw[:0]
	r.cur = nil
}

// errAt builds a ParseError at offset off, which lies in the segment being
// read (r.raw holds its bytes from segStart on).
func (r *Reader) errAt(off int64, tag string, code int, err error) *ParseError {
	line, ls := r.segLine, r.segLineStart
	if k := off - r.segStart; k > 0 && k <= int64(len(r.cur)) {
		pre := r.cur[:k]
		if n := bytes.Count(pre, []byte{'\n'}); n > 0 {
			line += n
			ls = r.segStart + int64(bytes.LastIndexByte(pre, '\n')) + 1
		}
	}
	return &ParseError{
		Offset: r.BaseOffset + off, Line: line, Column: int(off-ls) + 1,
		Segment: r.num + 1, Tag: tag, Code: code, Err: err,
	}
}

// occ is one occurrence of a data element: spans[start:end] of the
// tokenizer's scratch; rep marks a repetition of the previous element.
type occ struct {
	start, end int32
	rep        bool
}

// span is one component: text[start:end] of the segment being read.
type span struct{ start, end int32 }

// tokenize splits one segment (without its terminator) into elements,
// components and repetitions in one pass, checks its tag and updates the
// interchange state. It records spans only: the text is the body itself (a
// segment with a release character goes to tokenizeReleased), and strings
// are made by build only when the caller asks for them. The scan for the
// next separator is inline, one table lookup per byte: components average
// under 8 bytes, so a call or a wider step per run costs more than it saves.
func (r *Reader) tokenize(body []byte, cls *[256]uint8, start int64) error {
	r.cur, r.bin, r.segAt = body, nil, start
	spans, occs, elemOcc := r.spans[:0], r.occs[:0], r.elemOcc[:0]
	compStart, occStart := 0, 0
	repeated := false
	elemStart, elemNo, compNo := 0, 0, 1
	maxElem := r.MaxElementLen
	n := len(body)
	// Read wants strings: they are cut here in the same pass (a second loop
	// over the spans in build costs about 15%). The arena has room for the
	// whole body, so append never moves abuf and the strings stay put.
	strs := r.wantStrings
	var abuf []byte
	var base *byte
	comps := r.comps[:0]
	if strs {
		abuf = r.arenaFor(n)
		base = unsafe.SliceData(abuf)
	}
	r.compsDone = false
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
		if strs {
			if m := j - compStart; m > 0 {
				at := len(abuf)
				abuf = append(abuf, body[compStart:j]...)
				comps = append(comps, unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(base), at)), m))
			} else {
				comps = append(comps, "")
			}
		}
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
	r.spans, r.occs, r.elemOcc = spans, occs, elemOcc
	if strs {
		r.arena = r.arena[:len(r.arena)+len(abuf)]
		r.comps, r.compsDone = comps, true
	}
	return r.checkTag(start)
}

// tokenizeReleased is tokenize for a segment with release characters: the
// text is then built in r.unrel without them. It starts again from the
// segment's first byte, so errors come in the same order as in tokenize.
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
	r.spans, r.occs, r.elemOcc = spans, occs, elemOcc
	return r.checkTag(start)
}

func (r *Reader) ctrlErr(body []byte, cls *[256]uint8, start int64, j, elemNo, compNo int) error {
	c := body[j]
	msg := fmt.Errorf("control character %s inside a segment", quoteByte(c))
	if c == '\n' || c == '\r' {
		msg = fmt.Errorf("line break %s inside a segment (hard-wrapped line?)", quoteByte(c))
	}
	pe := r.errAt(start+int64(j), tagOf(body, cls), CodeInvalidCharacter, msg)
	pe.Element, pe.Component = elemNo, compNo
	return pe
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
	if !r.goodTag(tag) {
		return r.errAt(start, string(tag), CodeInvalidValue, errors.New(r.badTag(string(tag))))
	}
	r.afterSegment(tag)
	return nil
}

// rawValue returns component c (1-based) of element e (0 is the tag) of the
// tokenized segment, first occurrence, or nil.
func (r *Reader) rawValue(e, c int) []byte {
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

// build makes the Segment of the tokenized segment: each component is
// copied into the string arena (separators are not, which keeps a parsed
// document small) and becomes a string there.
func (r *Reader) build() *Segment {
	if !r.compsDone {
		r.cutStrings()
	}
	return r.assemble()
}

// cutStrings makes the component strings from the spans (after
// tokenizeReleased, or the ISA).
func (r *Reader) cutStrings() {
	text := r.text
	// The arena has room for the whole text, so append never moves buf and
	// the strings made from it stay put.
	buf := r.arenaFor(len(text))
	base := unsafe.SliceData(buf)
	comps := r.comps[:0]
	for _, sp := range r.spans {
		n := int(sp.end - sp.start)
		if n == 0 {
			comps = append(comps, "")
			continue
		}
		at := len(buf)
		buf = append(buf, text[sp.start:sp.end]...)
		comps = append(comps, unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(base), at)), n))
	}
	r.arena = r.arena[:len(r.arena)+len(buf)]
	r.comps = comps
}

// assemble builds the Segment from the component strings and occurrences.
func (r *Reader) assemble() *Segment {
	comps := r.comps
	all, elems := comps, r.elems[:0]
	if !r.ReuseSegment {
		all = make([]string, len(comps))
		copy(all, comps)
		elems = make([][]string, 0, len(r.occs)+1)
	}
	var reps []Repeat
	for _, o := range r.occs {
		v := all[o.start:o.end:o.end]
		if !o.rep {
			elems = append(elems, v)
			continue
		}
		pos := len(elems) - 1
		if len(reps) == 0 || reps[len(reps)-1].Element != pos {
			reps = append(reps, Repeat{Element: pos})
		}
		last := &reps[len(reps)-1]
		last.Occurrences = append(last.Occurrences, v)
	}
	if r.bin != nil { // X12 BIN data: one element of its own
		elems = append(elems, []string{string(r.bin)})
	}
	if r.ReuseSegment {
		r.elems = elems
	}
	seg := &r.seg
	if !r.ReuseSegment {
		seg = new(Segment)
	}
	start := r.segAt
	seg.Tag, seg.Elements, seg.Repeats = elems[0][0], elems[1:], reps
	seg.Offset, seg.Line, seg.Column = r.BaseOffset+start, r.segLine, int(start-r.segLineStart)+1
	return seg
}

// goodTag is the fast check behind badTag.
func (r *Reader) goodTag(tag []byte) bool {
	if len(tag) == 3 || (len(tag) == 2 && r.std == X12) {
		for i := 0; i < len(tag); i++ {
			if !tagChar[tag[i]] {
				return false
			}
		}
		return true
	}
	return false
}

var tagChar = func() (t [256]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	return t
}()

// badTag says why tag is not a segment tag: three letters or digits for
// EDIFACT, two or three for X12.
func (r *Reader) badTag(tag string) string {
	if tag == "" {
		return "empty segment (no tag)"
	}
	min := 3
	if r.std == X12 {
		min = 2
	}
	if len(tag) < min || len(tag) > 3 {
		return fmt.Sprintf("segment tag %q is not %d..3 characters", printable(tag, 8), min)
	}
	for i := 0; i < len(tag); i++ {
		if c := tag[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Sprintf("segment tag %q has a character other than A-Z, 0-9", printable(tag, 8))
		}
	}
	return ""
}

// afterSegment updates the interchange state: the UNB fixes the syntax
// version (and so the repetition separator), UNZ and IEA end an interchange.
func (r *Reader) afterSegment(tag []byte) {
	switch {
	case len(tag) == 3 && tag[0] == 'U' && tag[1] == 'N' && tag[2] == 'B' && r.pendingUNB:
		r.pendingUNB = false
		r.syntax = string(r.rawValue(1, 1))
		if string(r.rawValue(1, 2)) == "4" && r.repIfV4 != 0 {
			r.sep.Repetition = r.repIfV4
		}
		r.setClasses()
	case string(tag) == r.endTag:
		r.inside = false
	}
}

// scanText returns the length of the run of text bytes at the start of b.
// Eight bytes are tested per step (one OR of table lookups, no branch per
// byte) because long free-text values are where the time goes.
func scanText(b []byte, cls *[256]uint8) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := b[i : i+8 : i+8]
		if cls[w[0]]|cls[w[1]]|cls[w[2]]|cls[w[3]]|cls[w[4]]|cls[w[5]]|cls[w[6]]|cls[w[7]] != clsText {
			break
		}
	}
	for i < len(b) && cls[b[i]] == clsText {
		i++
	}
	return i
}

package edifact

import (
	"bytes"
	"errors"
	"fmt"
	"unsafe"
)

// tokenize runs the tokenizer of the caller: Read's, which cuts strings,
// or ReadRaw's, which records spans.
func (r *Reader) tokenize(body []byte, cls *[256]uint8, start int64) error {
	if r.wantStrings {
		seg, err := r.tokenizeStrings(body, cls, start)
		r.out = seg
		return err
	}
	return r.tokenizeSpans(body, cls, start)
}

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

// occ is one occurrence of a data element: components comps[start:end]
// (Read) or spans[start:end] (ReadRaw) of the tokenizer's scratch; rep marks
// a repetition of the previous element.
type occ struct {
	start, end int32
	rep        bool
}

// tokenizeStrings is the tokenizer of Read: it splits one segment (without
// its terminator) into elements, components and repetitions, removing
// release characters, in one pass, and cuts each component string from the
// string arena as soon as it ends. (ReadRaw's tokenizer, in rawtok.go,
// records spans instead; doing both here costs Read about 9% more
// instructions, measured with cachegrind.)
func (r *Reader) tokenizeStrings(body []byte, cls *[256]uint8, start int64) (*Segment, error) {
	r.cur, r.bin = body, nil
	// The arena always has room for the whole body, so append never moves
	// buf and the component strings made from it stay put.
	buf := r.arenaFor(len(body))
	base := unsafe.SliceData(buf)
	comps, occs := r.comps[:0], r.occs[:0]
	compStart, occStart := 0, 0
	repeated := false
	elemStart, elemNo, compNo := 0, 0, 1
	maxElem := r.MaxElementLen
	for i := 0; ; {
		j := i + scanText(body[i:], cls)
		buf = append(buf, body[i:j]...)
		k := uint8(clsElem) // the end of the body ends the last element
		if j < len(body) {
			k = cls[body[j]]
		}
		switch k {
		case clsRel:
			// The segment reader stops only at an unreleased terminator, so
			// a release character always has a next byte here.
			if j+1 >= len(body) {
				return nil, r.errAt(start+int64(j), tagOf(body, cls), CodeInvalidServiceChar,
					errors.New("release character at the end of the segment"))
			}
			n := body[j+1]
			if cls[n] == clsCtrl {
				return nil, r.ctrlErr(body, cls, start, j+1, elemNo, compNo)
			}
			// Releasing an ordinary character is tolerated: the character stays.
			buf = append(buf, n)
			i = j + 2
			continue
		case clsCtrl:
			return nil, r.ctrlErr(body, cls, start, j, elemNo, compNo)
		}
		// A component ends here (k is clsComp, clsRep or clsElem).
		if n := len(buf) - compStart; n > 0 {
			comps = append(comps, unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(base), compStart)), n))
		} else {
			comps = append(comps, "")
		}
		compStart = len(buf)
		if k == clsComp {
			compNo++
			i = j + 1
			continue
		}
		occs = append(occs, occ{start: int32(occStart), end: int32(len(comps)), rep: repeated})
		occStart = len(comps)
		repeated = k == clsRep
		if k == clsRep {
			compNo++
			i = j + 1
			continue
		}
		if maxElem > 0 && j-elemStart > maxElem {
			pe := r.errAt(start+int64(elemStart), tagOf(body, cls), CodeTooLong,
				fmt.Errorf("data element is %d bytes, longer than %d", j-elemStart, maxElem))
			pe.Element = elemNo
			return nil, pe
		}
		if j >= len(body) {
			break
		}
		elemStart, elemNo, compNo = j+1, elemNo+1, 1
		i = j + 1
	}
	r.arena = r.arena[:len(r.arena)+len(buf)]
	r.comps, r.occs = comps, occs
	return r.build(start)
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

// build assembles the Segment from the tokenizer's scratch and checks the tag.
func (r *Reader) build(start int64) (*Segment, error) {
	all, elems := r.comps, r.elems[:0]
	switch {
	case r.keep != nil:
		all = r.keep.strings(len(r.comps))
		all = append(all, r.comps...)
		elems = r.keep.elements(len(r.occs))
	case !r.ReuseSegment:
		all = make([]string, len(r.comps))
		copy(all, r.comps)
		elems = make([][]string, 0, len(r.occs))
	}
	return r.assemble(start, all, elems)
}

// assemble makes the Segment from its component strings all (in the order
// of r.occs) and an empty elems with room for every occurrence.
func (r *Reader) assemble(start int64, all []string, elems [][]string) (*Segment, error) {
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
	if r.ReuseSegment && r.keep == nil {
		r.elems = elems
	}
	tag := elems[0][0]
	if len(elems[0]) > 1 || (reps != nil && reps[0].Element == 0) {
		return nil, r.errAt(start, tag, CodeTooManyConstituents,
			errors.New("segment tag has components or repetitions"))
	}
	if !goodTag(r.std, tag) {
		return nil, r.errAt(start, tag, CodeInvalidValue, errors.New(r.badTag(tag)))
	}
	seg := &r.seg
	if !r.ReuseSegment && r.keep == nil {
		seg = new(Segment)
	}
	seg.Tag, seg.Elements, seg.Repeats = tag, elems[1:], reps
	seg.Offset, seg.Line, seg.Column = r.BaseOffset+start, r.segLine, int(start-r.segLineStart)+1
	r.afterSegment(seg)
	return seg, nil
}

// goodTag is the fast check behind badTag.
func goodTag[T string | []byte](std string, tag T) bool {
	if len(tag) == 3 || (len(tag) == 2 && std == X12) {
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
		return fmt.Sprintf("segment tag %s is not %d..3 characters", quoted(tag, 8), min)
	}
	for i := 0; i < len(tag); i++ {
		if c := tag[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Sprintf("segment tag %s has a character other than A-Z, 0-9", quoted(tag, 8))
		}
	}
	return ""
}

// afterSegment updates the interchange state: the UNB fixes the syntax
// version (and so the repetition separator), UNZ and IEA end an interchange.
func (r *Reader) afterSegment(seg *Segment) {
	switch {
	case r.pendingUNB && seg.Tag == "UNB":
		r.pendingUNB = false
		r.syntax = seg.Value(1, 1)
		if seg.Value(1, 2) == "4" && r.repIfV4 != 0 {
			r.sep.Repetition = r.repIfV4
		}
		r.setClasses()
	case len(seg.Tag) == len(r.endTag) && len(seg.Tag) > 0 && seg.Tag[0] == r.endTag[0] && seg.Tag == r.endTag:
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

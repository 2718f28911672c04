package edifact

import (
	"bytes"
	"errors"
	"fmt"
)

// mark records where the segment being read starts, for positions of errors.
func (r *Reader) mark() {
	r.segStart, r.segLine, r.segLineStart = r.off, r.line, r.lineStart
	r.raw = r.raw[:0]
}

// errAt builds a ParseError at offset off, which lies in the segment being
// read (r.raw holds its bytes from segStart on).
func (r *Reader) errAt(off int64, tag string, code int, err error) *ParseError {
	line, ls := r.segLine, r.segLineStart
	if k := off - r.segStart; k > 0 && k <= int64(len(r.raw)) {
		pre := r.raw[:k]
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

// tokenize splits one segment (without its terminator) into elements,
// components and repetitions, removing release characters. It makes one
// string for the whole segment; every component is a substring of it.
func (r *Reader) tokenize(body []byte, cls *[256]uint8, start int64) (*Segment, error) {
	buf := r.buf[:0]
	ends := r.ends[:0]
	elemStart, elemNo, compNo := 0, 0, 1
	maxElem := r.MaxElementLen
	tooLong := func(end int) error {
		pe := r.errAt(start+int64(elemStart), tagOf(body, cls), CodeTooLong,
			fmt.Errorf("data element is %d bytes, longer than %d", end-elemStart, maxElem))
		pe.Element = elemNo
		return pe
	}
	for i := 0; i < len(body); {
		j := i
		for j < len(body) && cls[body[j]] == clsText {
			j++
		}
		buf = append(buf, body[i:j]...)
		if j == len(body) {
			break
		}
		c := body[j]
		switch cls[c] {
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
		case clsComp, clsRep:
			ends = append(ends, compEnd{pos: len(buf), kind: cls[c]})
			compNo++
		case clsElem:
			if maxElem > 0 && j-elemStart > maxElem {
				return nil, tooLong(j)
			}
			ends = append(ends, compEnd{pos: len(buf), kind: clsElem})
			elemStart, elemNo, compNo = j+1, elemNo+1, 1
		case clsCtrl:
			return nil, r.ctrlErr(body, cls, start, j, elemNo, compNo)
		}
		i = j + 1
	}
	if maxElem > 0 && len(body)-elemStart > maxElem {
		return nil, tooLong(len(body))
	}
	ends = append(ends, compEnd{pos: len(buf), kind: clsElem})
	r.buf, r.ends = buf, ends
	return r.build(body, start)
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

// build turns buf and ends into a Segment and validates the tag.
func (r *Reader) build(body []byte, start int64) (*Segment, error) {
	s := string(r.buf)
	nElem := 0
	for _, e := range r.ends {
		if e.kind == clsElem {
			nElem++
		}
	}
	var comps []string
	var elems []Element
	if r.ReuseSegment && cap(r.comps) >= len(r.ends) && cap(r.elems) >= nElem {
		comps, elems = r.comps[:0], r.elems[:0]
	} else {
		comps, elems = make([]string, 0, len(r.ends)), make([]Element, 0, nElem)
		if r.ReuseSegment {
			r.comps, r.elems = comps, elems
		}
	}
	prev, repStart := 0, 0
	var cur Element
	first := true
	for _, e := range r.ends {
		comps = append(comps, s[prev:e.pos])
		prev = e.pos
		if e.kind == clsComp {
			continue
		}
		occ := comps[repStart:len(comps):len(comps)]
		if first {
			cur.Components = occ
		} else {
			cur.Repeats = append(cur.Repeats, occ)
		}
		repStart = len(comps)
		first = false
		if e.kind == clsElem {
			elems = append(elems, cur)
			cur, first = Element{}, true
		}
	}
	tag := elems[0].Components[0]
	if len(elems[0].Components) > 1 || elems[0].Repeats != nil {
		return nil, r.errAt(start, tag, CodeTooManyConstituents,
			errors.New("segment tag has components or repetitions"))
	}
	if msg := r.badTag(tag); msg != "" {
		return nil, r.errAt(start, tag, CodeInvalidValue, errors.New(msg))
	}
	seg := &r.seg
	if !r.ReuseSegment {
		seg = new(Segment)
	}
	*seg = Segment{Tag: tag, Elements: elems[1:], Offset: r.BaseOffset + start,
		Line: r.segLine, Column: int(start-r.segLineStart) + 1}
	r.afterSegment(seg)
	return seg, nil
}

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
func (r *Reader) afterSegment(seg *Segment) {
	switch {
	case r.pendingUNB && seg.Tag == "UNB":
		r.pendingUNB = false
		r.syntax = seg.Value(1, 1)
		if seg.Value(1, 2) == "4" && r.repIfV4 != 0 {
			r.sep.Repetition = r.repIfV4
		}
		r.setClasses()
	case r.std == EDIFACT && seg.Tag == "UNZ", r.std == X12 && seg.Tag == "IEA":
		r.inside = false
	}
}

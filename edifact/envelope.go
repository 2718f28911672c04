package edifact

import (
	"fmt"
	"strconv"
	"strings"
)

// checker follows the envelope structure segment by segment and builds the
// Document: UNB..UNZ, UNG..UNE, UNH..UNT (and the X12 equivalents in x12.go).
// It keeps only the open interchange, group and message; its work per
// segment is constant apart from appending to the document.
type checker struct {
	doc  *Document
	ic   *Interchange
	grp  *Group
	msg  *Message
	refs map[string]int // message references of the open interchange -> segment number
	// bare is set when the open interchange has messages outside groups.
	bare bool
	keep keeper
	// onMessage, when set (Walk), gets each message once its trailer is
	// checked; afterwards the message's segments are dropped and their
	// memory reused.
	onMessage func(*Message) error
	// views, when set (WalkViews), gets each message with its view
	// instead (streamview.go); in its own struct, so that a Walk's
	// checker stays as small as it was.
	views     *viewWalk
	segBuf    []Segment
	segsHi    int          // the most of segBuf's array used (messageDone)
	inputLen  int          // the input's size (Walk), for returnScratch
	scratch   *walkScratch // Walk's pooled buffers (scratch.go)
	refsTaken bool         // the pooled refs map is in use
	// last is the number and tag of the last segment added, so that a
	// missing trailer is reported after a segment that exists.
	lastNum int
	lastTag string
	// counting (Check) keeps no message headers, only counts, and copies
	// the strings it keeps so that no string arena outlives its message.
	counting bool
	nmsgs    int // messages closed, when counting
	ta1s     int // TA1 segments of the open X12 interchange
}

// messageDone hands a checked message to onMessage and recycles its segments.
func (c *checker) messageDone(m *Message) error {
	var err error
	switch {
	case c.views != nil:
		var view []byte
		if c.views.stream != nil {
			if view, err = c.finishView(m); err != nil {
				return err
			}
		}
		err = c.views.fn(m, view)
		if m.streamed != nil {
			m.streamed.src = nil // the input is the caller's again
		}
	case c.onMessage != nil:
		err = c.onMessage(m)
	default:
		return nil
	}
	if c.scratch != nil && c.inputLen <= smallWalk {
		// A small input's Walk: not cleared here, the next message
		// overwrites and returnScratch clears up to segsHi.
		c.segsHi = max(c.segsHi, len(m.Segments))
		c.keep.reset()
	} else {
		// Cleared, so that memory stays bounded by the largest message
		// (no string of an earlier message keeps its arena block alive).
		clear(m.Segments)
		c.keep.clearReset()
	}
	c.segBuf, m.Segments = m.Segments[:0], nil
	return err
}

// closed counts a checked message and keeps its header unless counting.
func (c *checker) closed(m *Message) {
	c.ic.nmsg++
	if c.grp != nil {
		c.grp.nmsg++
	}
	c.msg = nil
	if c.counting {
		c.nmsgs++
		return
	}
	c.ic.Messages = append(c.ic.Messages, m)
	if c.grp != nil {
		c.grp.Messages = append(c.grp.Messages, m)
	}
}

// headerTags are the segments whose values the checker keeps after the
// segment (envelope and message headers).
var headerTags = map[string]bool{"UNB": true, "UNG": true, "UNH": true, "ISA": true, "GS": true, "ST": true}

// ownStrings copies a segment with its strings, so that what the checker
// keeps does not pin the Reader's string arena (32 KiB blocks) in memory.
func ownStrings(s *Segment) *Segment {
	out := s.Clone()
	out.Tag = strings.Clone(s.Tag)
	for _, e := range out.Elements {
		for i := range e {
			e[i] = strings.Clone(e[i])
		}
	}
	return &out
}

// kept is the copy of an envelope segment the checker keeps (an
// interchange's or group's header and trailer): s aliases the Reader's
// slices, so they are copied; the strings are copied only when counting
// (Check), where nothing else keeps a string of the Reader's arena. In a
// Walk the messages kept already hold strings of it (their references and
// types), so a copy of the strings would cost an allocation each and free
// nothing. A header segment counting has already made its own (add) is
// kept as it is.
func (c *checker) kept(s *Segment) *Segment {
	if !c.counting {
		out := s.Clone()
		return &out
	}
	if headerTags[s.Tag] {
		return s
	}
	return ownStrings(s)
}

// newMessageSegments returns the slice a new message appends to.
func (c *checker) newMessageSegments() []Segment {
	if c.onMessage != nil || c.views != nil {
		return c.segBuf[:0]
	}
	return nil
}

func newChecker(std string) *checker {
	return &checker{doc: &Document{Standard: std}}
}

// segErr is an error located at a segment (and optionally an element).
func segErr(s *Segment, elem, comp, code int, format string, a ...any) *ParseError {
	return &ParseError{Offset: s.Offset, Line: s.Line, Column: s.Column, Segment: s.Number,
		Tag: s.Tag, Element: elem, Component: comp, Code: code, Err: fmt.Errorf(format, a...)}
}

// maxServiceElements bounds the data elements of the service segments
// (ISO 9735 version 4; earlier versions have fewer).
var maxServiceElements = map[string]int{"UNB": 11, "UNG": 8, "UNH": 7, "UNT": 2, "UNE": 2, "UNZ": 2}

// service checks the generic shape of a service segment: no repetitions,
// not too many elements.
func service(s *Segment) error {
	if n := maxServiceElements[s.Tag]; len(s.Elements) > n {
		return segErr(s, n+1, 0, CodeTooManyConstituents, "%s has %d data elements, at most %d", s.Tag, len(s.Elements), n)
	}
	if len(s.Repeats) > 0 {
		return segErr(s, s.Repeats[0].Element, 0, CodeTooManyRepetitions, "repetition in service segment %s", s.Tag)
	}
	return nil
}

// need returns component c of element e or a "missing" error naming it.
func need(s *Segment, e, c int, name string) (string, error) {
	v := s.Value(e, c)
	if v == "" {
		return "", segErr(s, e, c, CodeMissing, "%s %s is missing", s.Tag, name)
	}
	return v, nil
}

// count parses a control count.
func count(s *Segment, e int, name string) (int, error) {
	v, err := need(s, e, 1, name)
	if err != nil {
		return 0, err
	}
	n, cerr := strconv.Atoi(v)
	if cerr != nil || n < 0 || len(v) > 10 {
		return 0, segErr(s, e, 1, CodeInvalidValue, "%s %s %s is not a number", s.Tag, name, quoted(v, 16))
	}
	return n, nil
}

// add takes one segment; what it keeps it copies (s may alias the Reader).
func (c *checker) add(s *Segment) error {
	c.doc.Segments++
	c.lastNum, c.lastTag = s.Number, s.Tag
	if c.counting && headerTags[s.Tag] {
		s = ownStrings(s)
	}
	if c.ic != nil {
		c.ic.Segments++
	}
	if c.doc.Standard == X12 {
		return c.addX12(s)
	}
	if c.msg != nil {
		switch s.Tag {
		case "UNT":
			if err := service(s); err != nil {
				return err
			}
			return c.closeMessage(s)
		case "UNH", "UNE", "UNZ":
			return segErr(s, 0, 0, CodeMissing, "UNT missing: %s while message %s (segment %d) is open",
				s.Tag, quoted(c.msg.Ref, 20), c.msg.firstNumber())
		case "UNB", "UNG":
			return segErr(s, 0, 0, CodeNotSupportedPosition, "%s inside message %s", s.Tag, quoted(c.msg.Ref, 20))
		}
		return c.appendToMessage(s)
	}
	if maxServiceElements[s.Tag] > 0 {
		if err := service(s); err != nil {
			return err
		}
	}
	switch s.Tag {
	case "UNB":
		if c.ic != nil {
			return segErr(s, 0, 0, CodeMissing, "UNZ missing: UNB while interchange %s is open", quoted(c.ic.ControlRef, 20))
		}
		return c.openInterchange(s)
	}
	if c.ic == nil {
		return segErr(s, 0, 0, CodeOutsideEnvelope, "%s outside an interchange", s.Tag)
	}
	switch s.Tag {
	case "UNG":
		return c.openGroup(s)
	case "UNE":
		return c.closeGroup(s)
	case "UNH":
		return c.openMessage(s)
	case "UNZ":
		return c.closeInterchange(s)
	case "UNT":
		return segErr(s, 0, 0, CodeNotSupportedPosition, "UNT without UNH")
	}
	where := "interchange"
	if c.grp != nil {
		where = "group"
	}
	return segErr(s, 0, 0, CodeOutsideEnvelope, "segment %s outside a message (in the %s, between UNH..UNT)", s.Tag, where)
}

func (c *checker) openInterchange(s *Segment) error {
	ic := &Interchange{Standard: EDIFACT, Offset: s.Offset, Segments: 1}
	var err error
	if ic.Syntax, err = need(s, 1, 1, "syntax identifier (S001/0001)"); err != nil {
		return err
	}
	if ic.SyntaxVersion, err = need(s, 1, 2, "syntax version (S001/0002)"); err != nil {
		return err
	}
	if v := ic.SyntaxVersion; len(v) != 1 || v[0] < '1' || v[0] > '4' {
		return segErr(s, 1, 2, CodeSyntaxNotSupported, "syntax version %s is not 1..4", quoted(v, 8))
	}
	if ic.Sender.ID, err = need(s, 2, 1, "sender identification (S002/0004)"); err != nil {
		return err
	}
	if ic.Recipient.ID, err = need(s, 3, 1, "recipient identification (S003/0010)"); err != nil {
		return err
	}
	if ic.Date, err = need(s, 4, 1, "date (S004/0017)"); err != nil {
		return err
	}
	if ic.Time, err = need(s, 4, 2, "time (S004/0019)"); err != nil {
		return err
	}
	if ic.ControlRef, err = need(s, 5, 1, "interchange control reference (0020)"); err != nil {
		return err
	}
	ic.Sender.Qualifier, ic.Sender.Routing = s.Value(2, 2), s.Value(2, 3)
	ic.Recipient.Qualifier, ic.Recipient.Routing = s.Value(3, 2), s.Value(3, 3)
	ic.ApplicationRef, ic.AckRequest, ic.TestIndicator = s.Value(7, 1), s.Value(9, 1), s.Value(11, 1)
	ic.Header = c.kept(s)
	ic.cs = lookupCharset(ic.Syntax)
	if ic.cs == nil {
		ic.cs = anyText
	}
	c.ic, c.refs, c.bare = ic, c.newRefs(), false
	return nil
}

func (c *checker) closeInterchange(s *Segment) error {
	ic := c.ic
	if c.grp != nil {
		return segErr(s, 0, 0, CodeMissing, "UNE missing: UNZ while group %s is open", quoted(c.grp.ControlRef, 20))
	}
	n, err := count(s, 1, "interchange control count (0036)")
	if err != nil {
		return err
	}
	want, what := ic.nmsg, "messages"
	if len(ic.Groups) > 0 {
		want, what = len(ic.Groups), "groups"
	}
	if want == 0 {
		return segErr(s, 0, 0, CodeLowerLevelEmpty, "interchange %s holds no message", quoted(ic.ControlRef, 20))
	}
	if n != want {
		return segErr(s, 1, 1, CodeCountMismatch, "UNZ count %d but the interchange holds %d %s", n, want, what)
	}
	ref, err := need(s, 2, 1, "interchange control reference (0020)")
	if err != nil {
		return err
	}
	if ref != ic.ControlRef {
		return segErr(s, 2, 1, CodeReferenceMismatch, "UNZ reference %s does not match UNB %s", quoted(ref, 20), quoted(ic.ControlRef, 20))
	}
	ic.Trailer = c.kept(s)
	c.doc.Interchanges = append(c.doc.Interchanges, ic)
	c.ic, c.refs = nil, nil
	return nil
}

func (c *checker) openGroup(s *Segment) error {
	if c.grp != nil {
		return segErr(s, 0, 0, CodeMissing, "UNE missing: UNG while group %s is open", quoted(c.grp.ControlRef, 20))
	}
	if c.bare {
		return segErr(s, 0, 0, CodeGroupsMessagesMixed, "UNG after messages outside groups in the same interchange")
	}
	g := &Group{ID: s.Value(1, 1), Sender: Party{ID: s.Value(2, 1), Qualifier: s.Value(2, 2)},
		Recipient: Party{ID: s.Value(3, 1), Qualifier: s.Value(3, 2)}, Date: s.Value(4, 1), Time: s.Value(4, 2),
		Agency: s.Value(6, 1), Version: s.Value(7, 1), Release: s.Value(7, 2)}
	var err error
	if g.ControlRef, err = need(s, 5, 1, "group reference (0048)"); err != nil {
		return err
	}
	g.Header = c.kept(s)
	c.grp = g
	c.ic.Groups = append(c.ic.Groups, g)
	return nil
}

func (c *checker) closeGroup(s *Segment) error {
	g := c.grp
	if g == nil {
		return segErr(s, 0, 0, CodeNotSupportedPosition, "UNE without UNG")
	}
	n, err := count(s, 1, "group control count (0060)")
	if err != nil {
		return err
	}
	if g.nmsg == 0 {
		return segErr(s, 0, 0, CodeLowerLevelEmpty, "group %s holds no message", quoted(g.ControlRef, 20))
	}
	if n != g.nmsg {
		return segErr(s, 1, 1, CodeCountMismatch, "UNE count %d but the group holds %d messages", n, g.nmsg)
	}
	ref, err := need(s, 2, 1, "group reference (0048)")
	if err != nil {
		return err
	}
	if ref != g.ControlRef {
		return segErr(s, 2, 1, CodeReferenceMismatch, "UNE reference %s does not match UNG %s", quoted(ref, 20), quoted(g.ControlRef, 20))
	}
	g.Trailer = c.kept(s)
	c.grp = nil
	return nil
}

func (c *checker) openMessage(s *Segment) error {
	if c.grp == nil {
		if len(c.ic.Groups) > 0 {
			return segErr(s, 0, 0, CodeGroupsMessagesMixed, "UNH outside a group in an interchange that uses groups")
		}
		c.bare = true
	}
	m := &Message{Offset: s.Offset, Interchange: c.ic, Group: c.grp, Association: s.Value(2, 5)}
	var err error
	if m.Ref, err = need(s, 1, 1, "message reference (0062)"); err != nil {
		return err
	}
	for i, f := range []struct {
		dst  *string
		name string
	}{{&m.Type, "message type (0065)"}, {&m.Version, "version (0052)"}, {&m.Release, "release (0054)"}, {&m.Agency, "controlling agency (0051)"}} {
		if *f.dst, err = need(s, 2, i+1, f.name); err != nil {
			return err
		}
	}
	if prev, dup := c.refs[m.Ref]; dup {
		return segErr(s, 1, 1, CodeDuplicate, "message reference %s already used at segment %d", quoted(m.Ref, 20), prev)
	}
	c.refs[m.Ref] = s.Number
	m.Segments = append(c.newMessageSegments(), *s)
	c.msg = m
	return nil
}

func (c *checker) closeMessage(s *Segment) error {
	m := c.msg
	if err := c.appendToMessage(s); err != nil {
		return err
	}
	n, err := count(s, 1, "number of segments (0074)")
	if err != nil {
		return err
	}
	if n != m.SegmentCount() {
		return segErr(s, 1, 1, CodeCountMismatch, "UNT count %d but message %s has %d segments", n, quoted(m.Ref, 20), m.SegmentCount())
	}
	ref, err := need(s, 2, 1, "message reference (0062)")
	if err != nil {
		return err
	}
	if ref != m.Ref {
		return segErr(s, 2, 1, CodeReferenceMismatch, "UNT reference %s does not match UNH %s", quoted(ref, 20), quoted(m.Ref, 20))
	}
	c.closed(m)
	return c.messageDone(m)
}

// end checks that nothing is left open when the input ends at r's position.
// The error names no segment (the missing trailer has none): Tag is the
// trailer that is missing and the text names the last segment present.
func (c *checker) end(r *Reader) error {
	if c.msg == nil && c.grp == nil && c.ic == nil && len(c.doc.Interchanges) > 0 {
		return nil // the common case: no error to position
	}
	pe := r.endError()
	x12 := c.doc.Standard == X12
	after := "input ends"
	if c.lastNum > 0 {
		after = fmt.Sprintf("input ends after segment %d %s", c.lastNum, printable(c.lastTag, 8))
	}
	pe.Segment = 0
	switch {
	case c.msg != nil:
		pe.Tag = pick(x12, "SE", "UNT")
		pe.Err = fmt.Errorf("%s inside message %s (from segment %d): %s missing",
			after, quoted(c.msg.Ref, 20), c.msg.firstNumber(), pe.Tag)
	case c.grp != nil:
		pe.Tag = pick(x12, "GE", "UNE")
		pe.Err = fmt.Errorf("%s inside group %s: %s missing", after, quoted(c.grp.ControlRef, 20), pe.Tag)
	case c.ic != nil:
		pe.Tag = pick(x12, "IEA", "UNZ")
		pe.Err = fmt.Errorf("%s inside interchange %s: %s missing", after, quoted(c.ic.ControlRef, 20), pe.Tag)
	case len(c.doc.Interchanges) == 0:
		pe.Err = fmt.Errorf("no interchange")
	default:
		return nil
	}
	pe.Code = CodeMissing
	return pe
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

package edifact

import (
	"bytes"
	"errors"
	"fmt"
)

// WalkViews checks data exactly like Walk and hands fn each message with
// its JSON view (the bytes MessageJSON gives) once its trailer is checked.
// A message of up to sizedFrom segments comes as in Walk, with its
// Segments and a nil view: the caller renders it (MessageJSON), the small
// interchange's path unchanged. A larger one is rendered while it is read,
// segment by segment, and its segments are not kept: it comes with its
// view and no Segments (SegmentCount says how many it had). Memory is then
// the input and the views, not the segments of the largest message (136
// bytes and more a segment held until its trailer: 22 times the input for
// 6-byte segments, BenchmarkStageMemory in parse). For callers that need
// nothing of a large message but its view; the others use Walk.
//
// The view's buffer is sized once from the segments read before the switch
// and the input left up to the trailer (streamEstimate); it grows by
// doubling when that was short, and is copied to its exact size when more
// than an eighth is spare, as MessageJSON's sized buffer is.
func WalkViews(data []byte, opts *Options, fn func(m *Message, view []byte) error) (*Document, error) {
	return walkChecked(data, opts, nil, fn)
}

// viewWalk is the state of a WalkViews: its callback, the view of the
// open message being rendered while read (nil before the switch), and
// the input, from offset bodyStart to bodyEnd, with the Reader's limits
// (for EachSegment).
type viewWalk struct {
	fn                 func(*Message, []byte) error
	stream             *streamView
	body               []byte
	bodyStart, bodyEnd int64
	maxSeg, maxElem    int
}

// streamView is the view of the open message being rendered while read:
// its buffer starts with reserve bytes of room for the head (written last,
// when the segment count is known), then the segments array.
type streamView struct {
	j       jsonWriter
	reserve int
	n       int // segments rendered
}

// streamSlack is the room left in the view's buffer below which it is
// doubled before the next segment: a segment rendering more than that
// grows it once more by append.
const streamSlack = 64 << 10

// appendToMessage adds s to the open message: kept in its Segments, or,
// once a WalkViews message has more than sizedFrom segments, rendered
// into its view and dropped.
func (c *checker) appendToMessage(s *Segment) error {
	m := c.msg
	if w := c.views; w != nil && w.stream != nil {
		v := w.stream
		if err := v.add(m, s); err != nil {
			return err
		}
		m.streamed.count++
		// rewound, not cleared: s stays valid until the next Read, and
		// the next segment's slices reuse the slabs
		c.keep.reset()
		return nil
	}
	m.Segments = appendSegment(m.Segments, s)
	if c.views != nil && len(m.Segments) > sizedFrom {
		return c.startStream()
	}
	return nil
}

// startStream switches the open message to rendering while read: the
// segments kept so far are rendered and dropped.
func (c *checker) startStream() error {
	m := c.msg
	head, err := viewHead(m, 0)
	if err != nil {
		return err
	}
	v := &streamView{reserve: len(head) + 20} // the count's digits: at most 20
	v.j.b = make([]byte, v.reserve, v.reserve+c.streamEstimate(m))
	for i := range m.Segments {
		if err := v.add(m, &m.Segments[i]); err != nil {
			return err
		}
	}
	unh := &m.Segments[0]
	w := c.views
	m.streamed = &streamedMessage{count: len(m.Segments), first: unh.Number, src: &segmentSource{raw: w.body[m.Offset-w.bodyStart:],
		sep: c.ic.Separators, std: c.doc.Standard, syntax: c.ic.Syntax, line: unh.Line, col: unh.Column, maxSeg: w.maxSeg, maxElem: w.maxElem}}
	clear(m.Segments)
	m.Segments = m.Segments[:0]
	c.keep.reset() // the current segment still points into the slabs
	c.views.stream = v
	return nil
}

// add appends s's entry of the segments array. A segment the direct
// writer does not render (a value outside ASCII, a repeated element) is
// encoded alone as MarshalJSON encodes it within the array.
func (v *streamView) add(m *Message, s *Segment) error {
	j := &v.j
	if cap(j.b)-len(j.b) < streamSlack {
		grown := make([]byte, len(j.b), 2*cap(j.b)+streamSlack)
		copy(grown, j.b)
		j.b = grown
	}
	if v.n > 0 {
		j.b = append(j.b, ',')
	}
	v.n++
	mark := len(j.b)
	if j.segment(s) {
		return nil
	}
	j.b, j.bad = j.b[:mark], false
	b, err := marshal(m.segmentJSON(s))
	if err != nil {
		return err
	}
	j.b = append(j.b, b...)
	return nil
}

// finishView is the closed message's view: the head with the count
// written before the segments array, which is closed.
func (c *checker) finishView(m *Message) ([]byte, error) {
	v := c.views.stream
	c.views.stream = nil
	head, err := viewHead(m, m.SegmentCount())
	if err != nil {
		return nil, err
	}
	start := v.reserve - len(head)
	if start < 0 { // cannot happen: the count has at most 20 digits
		return nil, errors.New("edifact: the view's head outgrew its room")
	}
	b := append(v.j.b, "]}"...)
	copy(b[start:], head)
	b = b[start:]
	if spare := cap(b) - len(b); spare > len(b)/8 {
		return append([]byte(nil), b...), nil
	}
	return b[:len(b):len(b)], nil
}

// viewHead is m's view up to and with the opening of its segments array,
// for count segments: the direct writer's, or MarshalJSON's for a head it
// does not render (a value outside ASCII).
func viewHead(m *Message, count int) ([]byte, error) {
	j := jsonWriter{b: make([]byte, 0, 512)}
	if j.head(m, count); !j.bad {
		return j.b, nil
	}
	v := m.jsonView([]jsonSegment{})
	v.Message.SegmentCount = count
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	b, ok := bytes.CutSuffix(b, []byte("]}"))
	if !ok {
		return nil, errors.New("edifact: the view does not end with its segments array")
	}
	return b, nil
}

// streamEstimate is the view's size for the open message m, from what its
// kept segments render to per input byte, times the input up to the
// message's trailer: the first UNT (SE) tag after the last segment read
// that starts a line or follows a segment terminator, else the input's
// end. An estimate: a wrong guess costs a doubling or an exact-size copy.
func (c *checker) streamEstimate(m *Message) int {
	last := &m.Segments[len(m.Segments)-1]
	size := viewSize(m)
	read := last.Offset - m.Offset
	w := c.views
	end := w.bodyEnd
	if c.ic != nil {
		if at := trailerAt(w.body, int(last.Offset-w.bodyStart), c.doc.Standard, c.ic.Separators); at >= 0 {
			end = w.bodyStart + int64(at)
		}
	}
	left := end - last.Offset
	if read <= 0 || left <= 0 {
		return size
	}
	return size + int(float64(size)/float64(read)*float64(left))
}

// trailerAt is the offset in body of the first message trailer tag after
// from (UNT or SE followed by the element separator, after a segment
// terminator or a line break), or -1.
func trailerAt(body []byte, from int, std string, sep Separators) int {
	tag := []byte("UNT")
	if std == X12 {
		tag = []byte("SE")
	}
	pat := append(tag, sep.Element)
	for from < len(body) {
		i := bytes.Index(body[from:], pat)
		if i < 0 {
			return -1
		}
		at := from + i
		if at > 0 {
			if p := body[at-1]; p == sep.Segment || p == '\n' || p == '\r' {
				return at
			}
		}
		from = at + len(pat)
	}
	return -1
}

// segmentSource is where a message rendered while read is in the input:
// from its UNH (ST) to the input's end, with what a Reader needs to start
// there.
type segmentSource struct {
	raw             []byte
	sep             Separators
	std, syntax     string
	line, col       int // of the UNH (ST)
	maxSeg, maxElem int // the Reader's limits of the walk
}

// errSegmentsGone is EachSegment's error for a message rendered while read
// once the WalkViews callback that had it returned.
var errSegmentsGone = errors.New("edifact: the message's segments were not kept and its input is no longer at hand (outside the WalkViews callback)")

// EachSegment calls fn with each of m's segments in order, header and
// trailer included, and stops at fn's first error. For a message that
// WalkViews rendered while reading it (no Segments), the segments are read
// again from the input one at a time, during the WalkViews callback only:
// s is then valid only during the call (its strings may be kept, not its
// slices), and memory stays one segment. For the others it ranges over
// Segments.
func (m *Message) EachSegment(fn func(s *Segment) error) error {
	if m.streamed == nil {
		for i := range m.Segments {
			if err := fn(&m.Segments[i]); err != nil {
				return err
			}
		}
		return nil
	}
	src := m.streamed.src
	if src == nil {
		return errSegmentsGone
	}
	r := newReaderOptions(bytes.NewReader(src.raw), len(src.raw), &Options{MaxSegmentLen: src.maxSeg, MaxElementLen: src.maxElem})
	r.BaseOffset, r.ReuseSegment = m.Offset, true
	r.std, r.sep, r.syntax, r.inside, r.endTag = src.std, src.sep, src.syntax, true, "UNZ"
	if src.std == X12 {
		r.endTag = "IEA"
	}
	r.setClasses()
	r.line, r.lineStart, r.num = src.line, -int64(src.col-1), m.streamed.first-1
	for n := m.SegmentCount(); n > 0; n-- {
		s, err := r.Read()
		if err != nil { // the walk read these bytes: cannot happen
			return fmt.Errorf("edifact: reading message %s again: %w", quoted(m.Ref, 20), err)
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}

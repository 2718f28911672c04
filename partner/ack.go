package partner

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/wire"
)

// Acknowledgement types (x-message-type of an ack, last token of its
// subject).
const (
	TypeCONTRL = "CONTRL"
	TypeAPERAK = "APERAK"
	TypeTA1    = "TA1"
	Type997    = "997"
	Type999    = "999"
)

// target is what a negative acknowledgement names: the interchange, the
// message and group if the error is inside one, the segment position in
// the message (UNH = 1) and the element.
type target struct {
	ich      *edifact.Interchange
	group    *edifact.Group
	msg      *edifact.Message
	msgSeg   int    // position of the erroneous segment in its message; 0: none
	segTag   string // its tag
	svcTag   string // a service segment in error (UNB, UNZ, UNH, UNT, ISA, GS, ...)
	code     int    // 0085
	elem     int    // S011 0098 (tag = 1); 0: the whole segment
	comp     int    // S011 0104
	rep      int    // S011 0136 (syntax 4)
	business *Rejection
	msgText  string
}

// Acks builds the acknowledgements partner's profile agrees for an
// interchange: failure nil means accepted. Nothing is sent here.
// Our control references derive from the INGEST sequence of origin (the
// hub's Finish takes them from the partner's counter instead).
func (r *Registry) Acks(partner, origin, corr string, data []byte, doc *edifact.Document, failure error) []*nats.Msg {
	return r.AcksAt(partner, origin, corr, data, doc, failure, 0)
}

// AcksAt is Acks numbered from block seq (NextAckRef; 0: the INGEST
// sequence of origin).
func (r *Registry) AcksAt(partner, origin, corr string, data []byte, doc *edifact.Document, failure error, seq uint64) []*nats.Msg {
	if seq == 0 {
		seq = originSeq(origin)
	}
	p, ok := r.Set().Get(partner)
	if !ok {
		return nil
	}
	b := ackBuilder{p: p, now: r.now().UTC(), origin: origin, corr: corr, seq: seq, data: data}
	if failure != nil && doc != nil { // accept: message, some refused
		b.partial(doc, rejections(failure))
		return b.out
	}
	if failure == nil {
		if doc == nil {
			return nil
		}
		for _, ich := range doc.Interchanges {
			b.accepted(ich)
		}
		return b.out
	}
	t := locate(data, failure)
	if t.ich == nil {
		return nil // not even an envelope to answer to
	}
	b.rejected(t)
	return b.out
}

// originSeq is the sequence of STREAM:SEQ.
func originSeq(origin string) uint64 {
	_, s, _ := strings.Cut(origin, ":")
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

type ackBuilder struct {
	p      *Profile
	now    time.Time
	origin string
	corr   string
	seq    uint64
	out    []*nats.Msg
	data   []byte // the original, for the groups of an X12 interchange
}

// ref is our interchange control reference for the i-th acknowledgement:
// derived from the original's stream sequence, so the same redelivered
// interchange gets the same reference.
func (b *ackBuilder) ref() string {
	return "A" + strconv.FormatUint(b.seq%1_000_000_000_000, 10) + strconv.Itoa(len(b.out))
}

// x12Ref is the nine-digit ISA13 of the i-th acknowledgement.
func (b *ackBuilder) x12Ref() string {
	n := (b.seq*10 + uint64(len(b.out))) % 1_000_000_000
	s := strconv.FormatUint(n, 10)
	return strings.Repeat("0", 9-len(s)) + s
}

func (b *ackBuilder) add(typ, ackOf, ourRef, result string, ich *edifact.Interchange, body []byte) {
	h := nats.Header{}
	h.Set(wire.HdrPartnerID, b.p.ID)
	h.Set(wire.HdrMessageType, typ)
	h.Set(wire.HdrStandard, ich.Standard)
	h.Set(wire.HdrMessageID, ourRef)
	h.Set(wire.HdrAckOf, ackOf)
	h.Set(wire.HdrAckOrigin, b.origin)
	h.Set(wire.HdrAckResult, result)
	if b.corr != "" {
		h.Set(wire.HdrCorrelationID, b.corr)
	}
	b.out = append(b.out, &nats.Msg{Subject: wire.OutboundSubject(b.p.ID, typ), Header: h, Data: body})
}

func (b *ackBuilder) accepted(ich *edifact.Interchange) {
	a := b.p.Ack
	if ich.Standard == "X12" {
		// ISA14 = 1 asks for a TA1 (X12.5): sent unless ta1 is none
		if a.TA1 == AckAll || a.TA1 == AckErrors && ich.AckRequest == "1" {
			ref := b.x12Ref()
			b.add(TypeTA1, ich.ControlRef, ref, "accepted", ich, ta1(ich, ref, b.now, "A", 0))
		}
		if a.X12 != AckNone && a.X12All {
			for _, g := range b.x12Groups(ich, target{}) {
				ref := b.x12Ref()
				b.add(a.X12, ich.ControlRef, ref, "accepted", ich, functionalAck(a.X12, target{ich: ich, group: g.g}, g, ref, b.now, true, nil))
			}
		}
		return
	}
	if action := b.positive(ich); action != 0 {
		ref := b.ref()
		b.add(TypeCONTRL, ich.ControlRef, ref, "accepted", ich, contrl(target{ich: ich}, ref, b.now, action))
	}
}

// positive is the UCI action of the positive CONTRL an accepted EDIFACT
// interchange gets, 0 for none: with contrl all, and with contrl errors
// when the UNB asks for one (0031 = 1 acknowledgement requested; 2, in
// syntax 4, an indication of receipt: action 8). contrl none sends none.
func (b *ackBuilder) positive(ich *edifact.Interchange) int {
	a := b.p.Ack
	switch {
	case a.CONTRL == AckNone:
		return 0
	case ich.AckRequest == "2" && ich.SyntaxVersion == "4":
		return 8
	case a.CONTRL == AckAll || ich.AckRequest == "1":
		return a.Positive
	}
	return 0
}

func (b *ackBuilder) rejected(t target) {
	a := b.p.Ack
	ich := t.ich
	if ich.Standard == "X12" && t.business != nil {
		// a business refusal is no syntax error: the 999/997 reports the
		// syntax, which was right (sent when x12_all, as for an accepted
		// interchange); the refusal itself is in the dead letter (edihub
		// writes no 824)
		b.accepted(ich)
		return
	}
	if ich.Standard == "X12" {
		envelope := t.msg == nil && t.group == nil
		if a.TA1 != AckNone && envelope {
			ref := b.x12Ref()
			b.add(TypeTA1, ich.ControlRef, ref, "rejected", ich, ta1(ich, ref, b.now, "R", ta1Note(t)))
		}
		// every group of the interchange is refused with it: each gets
		// its functional ack (unless the ISA itself is what failed: the
		// TA1 answers that, no group was opened)
		if a.X12 != AckNone && t.svcTag != "ISA" {
			for _, g := range b.x12Groups(ich, t) {
				ref := b.x12Ref()
				b.add(a.X12, ich.ControlRef, ref, "rejected", ich, functionalAck(a.X12, t, g, ref, b.now, false, nil))
			}
		}
		return
	}
	if t.business != nil {
		if a.APERAK && t.msg != nil {
			ref := b.ref()
			b.add(TypeAPERAK, ich.ControlRef, ref, "rejected", ich, aperak(t, ref, b.now))
		}
		if action := b.positive(ich); action != 0 { // the syntax was right: CONTRL says so
			ref := b.ref()
			b.add(TypeCONTRL, ich.ControlRef, ref, "accepted", ich, contrl(target{ich: ich}, ref, b.now, action))
		}
		return
	}
	if a.CONTRL != AckNone {
		ref := b.ref()
		b.add(TypeCONTRL, ich.ControlRef, ref, "rejected", ich, contrl(t, ref, b.now, 4))
	}
}

// x12Groups are the groups of ich as a scan of the input finds them; the
// group t names is among them (added when the scan did not reach it), and
// without input the groups the walk kept.
func (b *ackBuilder) x12Groups(ich *edifact.Interchange, t target) []*x12Group {
	groups := scanX12(b.data, ich.ControlRef)
	if len(groups) == 0 {
		for _, g := range ich.Groups {
			sg := &x12Group{g: g, ge01: strconv.Itoa(len(g.Messages))}
			for _, m := range g.Messages {
				sg.sets = append(sg.sets, x12Set{typ: m.Type, ref: m.Ref, impl: m.Release})
			}
			groups = append(groups, sg)
		}
	}
	if t.group != nil && !slices.ContainsFunc(groups, func(g *x12Group) bool { return g.g.ControlRef == t.group.ControlRef }) {
		groups = append(groups, &x12Group{g: t.group})
	}
	return groups
}

// locate finds what a failure names. A refusal by a profile carries its
// interchange and message; a parse error its segment number in the input,
// from which the input is read again, segment by segment up to it, to find
// the enclosing interchange, group and message (bounded: the reader's
// limits, and it stops at the error).
func locate(data []byte, failure error) target {
	t := target{code: codeUnspecified, msgText: failure.Error()}
	var rej *Rejection
	var pe *edifact.ParseError
	var ge *edifact.GuardError
	segNo, offset := 0, int64(-1)
	switch {
	case errors.As(failure, &rej):
		t.code, t.ich, t.msg, t.group = rej.Code, rej.Interchange, rej.Message, rej.Group
		if t.msg != nil {
			t.group = t.msg.Group
		}
		if rej.DLQCause == wire.CauseBusiness {
			t.business = rej
		}
		switch {
		case rej.MsgSegment > 0: // a segment of the message (directory validation)
			t.msgSeg, t.segTag, t.elem, t.comp, t.rep = rej.MsgSegment, rej.Tag, rej.Element, rej.Component, rej.Repetition
			if isService(rej.Tag) {
				t.svcTag = rej.Tag
			}
		case rej.Tag != "":
			t.svcTag, t.elem, t.comp = rej.Tag, rej.Element, rej.Component
		}
		if t.ich != nil {
			return t
		}
	case errors.As(failure, &pe):
		t.code, segNo = pe.Code, pe.Segment
		if pe.Segment == 0 && pe.Code == edifact.CodeMissing && pe.Tag != "" {
			// the input ended with a trailer missing: read to the end,
			// so the open interchange, group and set are the ones named
			segNo, t.svcTag = math.MaxInt, pe.Tag
		}
		if pe.Element > 0 {
			t.elem, t.comp = pe.Element+1, pe.Component
		}
		t.segTag = pe.Tag
	case errors.As(failure, &ge):
		t.code, offset = ge.Code, ge.Offset
	}
	if t.code == 0 {
		t.code = codeUnspecified
	}
	walkTo(data, segNo, offset, &t)
	return t
}

// walkTo reads data up to segment segNo, or up to the segment holding
// byte offset (a guard error names only an offset; -1: none), or else only
// the first interchange header, and fills the envelope of t.
func walkTo(data []byte, segNo int, offset int64, t *target) {
	rd := edifact.NewReader(bytes.NewReader(data))
	rd.MaxSegmentLen = 64 << 10
	rd.MaxElementLen = 4 << 10
	var msgStart int
	for {
		seg, err := rd.Read()
		if err != nil && readFault(err, segNo, offset, msgStart, t) {
			return
		}
		if offset >= 0 && err == nil && seg.Offset <= offset {
			segNo = seg.Number // the last segment starting at or before the offset, so far
		}
		if offset >= 0 && (err != nil || seg.Offset > offset) {
			offset = -1
			if segNo > 0 {
				// passed it (or the input ended): segNo holds the
				// offset; read again up to it
				rd = edifact.NewReader(bytes.NewReader(data))
				rd.MaxSegmentLen, rd.MaxElementLen = 64<<10, 4<<10
				t.ich, t.group, t.msg, msgStart = nil, nil, nil, 0
				continue
			}
			// before the first segment: name the interchange only
		}
		if err != nil {
			return
		}
		if offset < 0 && segNo > 0 && seg.Number >= segNo {
			if seg.Tag == "UNB" || seg.Tag == "ISA" { // the header itself is in error
				t.ich, t.group, t.msg = headerOf(seg), nil, nil
			}
			if t.msg != nil && t.code == edifact.CodeMissing && closesSet(seg.Tag) {
				// the set's trailer is missing: the fault is the set's
				// (IK5/AK5 2, UCM on UNT), not the segment that came
				// instead, which is no part of it
				t.svcTag, t.segTag, t.msgSeg = trailerOf(seg.Tag), trailerOf(seg.Tag), 0
				return
			}
			if t.msg != nil && msgStart > 0 {
				t.msgSeg = seg.Number - msgStart + 1
			}
			if t.segTag == "" {
				t.segTag = seg.Tag
			}
			if isService(seg.Tag) {
				t.svcTag = seg.Tag
			}
			return
		}
		switch seg.Tag {
		case "UNB", "ISA":
			t.ich, t.group, t.msg = headerOf(seg), nil, nil
			if segNo == 0 {
				return
			}
		case "UNG", "GS":
			t.group = &edifact.Group{ID: seg.Value(1, 1), ControlRef: pick(seg.Tag == "GS", seg.Value(6, 1), seg.Value(5, 1)),
				Version: pick(seg.Tag == "GS", seg.Value(8, 1), seg.Value(7, 2))}
			if seg.Tag == "GS" {
				t.group.Sender.ID, t.group.Recipient.ID = seg.Value(2, 1), seg.Value(3, 1)
			} else { // UNG S006 0040:0007, S007 0044:0007
				t.group.Sender = edifact.Party{ID: seg.Value(2, 1), Qualifier: seg.Value(2, 2)}
				t.group.Recipient = edifact.Party{ID: seg.Value(3, 1), Qualifier: seg.Value(3, 2)}
			}
		case "UNH":
			t.msg = &edifact.Message{Ref: seg.Value(1, 1), Type: seg.Value(2, 1), Version: seg.Value(2, 2), Release: seg.Value(2, 3),
				Agency: seg.Value(2, 4), Association: seg.Value(2, 5), Interchange: t.ich, Group: t.group}
			msgStart = seg.Number
		case "ST":
			t.msg = &edifact.Message{Ref: seg.Value(2, 1), Type: seg.Value(1, 1), Interchange: t.ich, Group: t.group}
			if t.group != nil {
				t.msg.Version = t.group.Version
			}
			msgStart = seg.Number
		case "UNT", "SE":
			t.msg, msgStart = nil, 0
		case "UNE", "GE":
			t.group = nil
		}
	}
}

// readFault takes a read error as the fault itself when it is where the
// failure points (its segment, or the offset the guard named): the segment
// the Reader could not read is the one in error, so it is named by its own
// tag and position (in the message: from msgStart), not by the last
// segment read before it. It reports whether it did.
func readFault(err error, segNo int, offset int64, msgStart int, t *target) bool {
	var pe *edifact.ParseError
	if !errors.As(err, &pe) || pe.Segment == 0 {
		return false
	}
	if offset < 0 && pe.Segment != segNo {
		return false // not the fault: read on to it
	}
	if t.msg != nil && msgStart > 0 {
		t.msgSeg = pe.Segment - msgStart + 1
	}
	if pe.Tag != "" {
		t.segTag = pe.Tag
		if isService(pe.Tag) {
			t.svcTag = pe.Tag
		}
	}
	if t.elem == 0 && pe.Element > 0 {
		t.elem, t.comp = pe.Element+1, pe.Component
		if t.comp == 1 {
			t.comp = 0 // the Reader counts a simple element as component 1
		}
	}
	return true
}

// closesSet tells the segments that end an open message or set when its
// trailer is missing.
func closesSet(tag string) bool {
	switch tag {
	case "UNH", "UNE", "UNZ", "UNB", "UNG", "ST", "GE", "GS", "IEA", "ISA":
		return true
	}
	return false
}

func trailerOf(tag string) string {
	switch tag {
	case "ST", "GE", "GS", "IEA", "ISA":
		return "SE"
	}
	return "UNT"
}

func isService(tag string) bool {
	switch tag {
	case "UNA", "UNB", "UNZ", "UNG", "UNE", "UNH", "UNT", "ISA", "IEA", "GS", "GE", "ST", "SE":
		return true
	}
	return false
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// headerOf reads an interchange header segment.
func headerOf(s *edifact.Segment) *edifact.Interchange {
	if s.Tag == "ISA" {
		return &edifact.Interchange{Standard: "X12", Syntax: "X12", SyntaxVersion: s.Value(12, 1),
			Sender:    edifact.Party{ID: strings.TrimSpace(s.Value(6, 1)), Qualifier: strings.TrimSpace(s.Value(5, 1))},
			Recipient: edifact.Party{ID: strings.TrimSpace(s.Value(8, 1)), Qualifier: strings.TrimSpace(s.Value(7, 1))},
			Date:      s.Value(9, 1), Time: s.Value(10, 1), ControlRef: s.Value(13, 1), TestIndicator: s.Value(15, 1)}
	}
	return &edifact.Interchange{Standard: "EDIFACT", Syntax: s.Value(1, 1), SyntaxVersion: s.Value(1, 2),
		Sender:    edifact.Party{ID: s.Value(2, 1), Qualifier: s.Value(2, 2), Routing: s.Value(2, 3)},
		Recipient: edifact.Party{ID: s.Value(3, 1), Qualifier: s.Value(3, 2), Routing: s.Value(3, 3)},
		Date:      s.Value(4, 1), Time: s.Value(4, 2), ControlRef: s.Value(5, 1), TestIndicator: s.Value(11, 1)}
}

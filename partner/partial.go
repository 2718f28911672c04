package partner

import (
	"errors"
	"strconv"
	"time"

	"github.com/edihub/edihub/edifact"
)

// AckPartial is the x-ack-result of an acknowledgement that accepts some
// messages of an interchange and rejects others (accept: message).
const AckPartial = "partial"

// AcceptsMessage tells whether err refuses one message alone for partner:
// the profile says accept: message and err is a refusal of a message by
// its type, its directory validation or a rule (a *Rejection naming the
// message, not its group or interchange). Anything else refuses the
// interchange.
func (r *Registry) AcceptsMessage(partner string, err error) bool {
	p, ok := r.Set().Get(partner)
	if !ok || p.Accept != AcceptMessage {
		return false
	}
	var rej *Rejection
	return errors.As(err, &rej) && rej.Message != nil && rej.Interchange != nil && rej.Group == nil
}

// rejections are the refusals of single messages that failure joins
// (errors.Join, as the parse stage and Try hand them over).
func rejections(failure error) []*Rejection {
	errs := []error{failure}
	if j, ok := failure.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []*Rejection
	for _, e := range errs {
		var rej *Rejection
		if errors.As(e, &rej) && rej.Message != nil {
			out = append(out, rej)
		}
	}
	return out
}

// partial acknowledges an interchange of which the messages rejs name were
// refused and the others accepted (accept: message). EDIFACT: a CONTRL
// with UCI 0083 7 ("this level acknowledged, next lower level acknowledged
// if not explicitly rejected") and a UCM for every message, 7 accepted or
// 4 rejected with its UCS/UCD; a business refusal is no syntax error (its
// UCM says 7) and gets its APERAK. X12: a TA1 as for an accepted
// interchange, and per group a 999/997 with AK2 and IK5/AK5 A or R (with
// IK3/IK4) for every set and AK9 A, P (partially accepted: at least one
// set rejected) or R.
func (b *ackBuilder) partial(doc *edifact.Document, rejs []*Rejection) {
	a := b.p.Ack
	for _, ich := range doc.Interchanges {
		faults := map[*edifact.Message]target{}
		var business []target
		for _, rej := range rejs {
			if rej.Interchange != ich {
				continue
			}
			t := locate(b.data, rej)
			if t.business != nil {
				business = append(business, t)
				continue
			}
			faults[rej.Message] = t
		}
		if len(faults) == 0 && len(business) == 0 {
			b.accepted(ich)
			continue
		}
		// every message refused for a fault: the interchange is refused
		// (parse.Decide and Try), and each message's fault is named
		result := AckPartial
		if len(faults) == len(ich.Messages) {
			result = "rejected"
		}
		if ich.Standard == "X12" {
			if len(faults) == 0 { // business refusals only: the syntax was right
				b.accepted(ich)
				continue
			}
			if a.TA1 == AckAll || a.TA1 == AckErrors && ich.AckRequest == "1" {
				ref := b.x12Ref()
				b.add(TypeTA1, ich.ControlRef, ref, "accepted", ich, ta1(ich, ref, b.now, "A", 0))
			}
			if a.X12 != AckNone {
				byRef := map[string]target{}
				for m, t := range faults {
					byRef[m.Ref] = t
				}
				for _, g := range b.x12Groups(ich, target{}) {
					ref := b.x12Ref()
					b.add(a.X12, ich.ControlRef, ref, result, ich,
						functionalAck(a.X12, target{ich: ich, group: g.g}, g, ref, b.now, true, byRef))
				}
			}
			continue
		}
		if a.APERAK {
			for _, t := range business {
				ref := b.ref()
				b.add(TypeAPERAK, ich.ControlRef, ref, "rejected", ich, aperak(t, ref, b.now))
			}
		}
		switch {
		case len(faults) > 0 && a.CONTRL != AckNone:
			ref := b.ref()
			b.add(TypeCONTRL, ich.ControlRef, ref, result, ich, contrlPartial(ich, faults, ref, b.now))
		case len(faults) == 0:
			if action := b.positive(ich); action != 0 {
				ref := b.ref()
				b.add(TypeCONTRL, ich.ControlRef, ref, "accepted", ich, contrl(target{ich: ich}, ref, b.now, action))
			}
		}
	}
}

// contrlPartial is the CONTRL of a partially accepted interchange: UCI 7,
// then for the messages outside groups (SG1) and per group (SG3, UCF 7;
// SG4 its messages) a UCM each, in the order of the interchange. When
// every message has a fault, the interchange is refused: UCI 0083 4 ("this
// level and all lower levels rejected", code list 0083 of the CONTRL
// message), UCF 4 for a group all of whose messages have one, and still a
// UCM 4 with its UCS/UCD for every message, so that every error is named,
// not only the first.
func contrlPartial(ich *edifact.Interchange, faults map[*edifact.Message]target, ref string, now time.Time) []byte {
	var w ediWriter
	w.open(ich, "", ref, now)
	w.startMessage(TypeCONTRL)
	action := func(ms []*edifact.Message) string {
		if len(ms) == 0 {
			return "7"
		}
		for _, m := range ms {
			if _, ok := faults[m]; !ok {
				return "7"
			}
		}
		return "4"
	}
	w.seg("UCI", el(cut(ich.ControlRef, 14)), partyEl(ich.Sender), partyEl(ich.Recipient), el(action(ich.Messages)))
	for _, m := range ich.Messages {
		if m.Group == nil {
			w.ucm(m, faults)
		}
	}
	for _, g := range ich.Groups {
		var in []*edifact.Message
		for _, m := range ich.Messages {
			if m.Group == g {
				in = append(in, m)
			}
		}
		w.seg("UCF", el(cut(g.ControlRef, 14)), partyEl(g.Sender), partyEl(g.Recipient), el(action(in)))
		for _, m := range ich.Messages {
			if m.Group == g {
				w.ucm(m, faults)
			}
		}
	}
	return w.close(ref)
}

// ucm writes the UCM of one message: 7 accepted, or 4 with its fault.
func (w *ediWriter) ucm(m *edifact.Message, faults map[*edifact.Message]target) {
	id := el(cut(m.Type, 6), cut(m.Version, 3), cut(m.Release, 3), cut(m.Agency, 2))
	t, refused := faults[m]
	if !refused {
		w.seg("UCM", el(cut(m.Ref, 14)), id, el("7"))
		return
	}
	w.messageFault(t, id)
}

// messageFault writes the UCM (action 4) of a refused message and the
// UCS/UCD naming the segment and element in error.
func (w *ediWriter) messageFault(t target, id []string) {
	m := t.msg
	ucm := []([]string){el(cut(m.Ref, 14)), id, el("4")}
	onHeader := t.svcTag == "UNH" || t.svcTag == "UNT"
	switch {
	case onHeader:
		ucm = append(ucm, el(strconv.Itoa(t.code)), el(t.svcTag), serviceS011(t.svcTag, t.elem, t.comp))
	case t.msgSeg == 0:
		ucm = append(ucm, el(strconv.Itoa(t.code)))
	}
	w.seg("UCM", ucm...)
	if onHeader || t.msgSeg == 0 {
		return
	}
	if t.elem == 0 {
		w.seg("UCS", el(strconv.Itoa(t.msgSeg)), el(strconv.Itoa(t.code)))
		return
	}
	w.seg("UCS", el(strconv.Itoa(t.msgSeg)))
	s011 := el(strconv.Itoa(t.elem), num(t.comp))
	if w.v4 && t.rep > 0 {
		// S011 0136 (ISO 9735-4 V4 UCD): the occurrence of the repeated
		// element in error
		s011 = append(s011, strconv.Itoa(t.rep))
	}
	w.seg("UCD", el(strconv.Itoa(t.code)), s011)
}

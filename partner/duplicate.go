package partner

import (
	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
)

// DuplicateAcks builds the acknowledgements of an interchange the hub has
// processed before (its interchange ledger says so): a partner that resends
// because its CONTRL never came gets one that says why, a negative CONTRL
// with UCI 0085 26 (duplicate detected) on UNB 0020 (S011 0098 6), or a TA1
// R with TA105 025 (duplicate interchange control number), as the profile
// agrees them (contrl, ta1 not none). Nothing is sent here; the caller
// publishes them with dedupe ids from origin as Finish does.
func (r *Registry) DuplicateAcks(partner, origin, corr string, data []byte) []*nats.Msg {
	p, ok := r.Set().Get(partner)
	if !ok {
		return nil
	}
	var t target
	walkTo(data, 0, -1, &t) // the first interchange header
	if t.ich == nil {
		return nil
	}
	b := ackBuilder{p: p, now: r.now().UTC(), origin: origin, corr: corr, seq: originSeq(origin), data: data}
	ich := t.ich
	t.code, t.group, t.msg = edifact.CodeDuplicate, nil, nil
	if ich.Standard == "X12" {
		if p.Ack.TA1 != AckNone {
			t.svcTag, t.elem = "ISA", 14 // ISA13
			ref := b.x12Ref()
			b.add(TypeTA1, ich.ControlRef, ref, "rejected", ich, ta1(ich, ref, b.now, "R", ta1Note(t)))
		}
		return b.out
	}
	if p.Ack.CONTRL != AckNone {
		t.svcTag, t.elem = "UNB", 6 // 0020
		ref := b.ref()
		b.add(TypeCONTRL, ich.ControlRef, ref, "rejected", ich, contrl(t, ref, b.now, 4))
	}
	return b.out
}

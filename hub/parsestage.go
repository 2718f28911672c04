package hub

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/hub/audit"
	"github.com/edihub/edihub/wire"
)

// EDIFACTConfig tunes the built-in parse stage (hub.edifact); the edifact
// package owns it.
type EDIFACTConfig = edifact.Config

// ParseStage is the built-in stage: guard, parse and envelope checks, then
// one JSON view per message (UNH..UNT or ST..SE) on
// edi.parsed.<partner>.<type>. Every refusal is permanent with cause
// schema: retrying a broken interchange cannot help.
//
// With a ledger, an interchange whose every envelope was processed before
// is a duplicate (a replay, or the partner sending it again): the stage
// returns a *DuplicateError and the worker acks it without outputs, unless
// the message carries x-replay-force: true.
func ParseStage(cfg EDIFACTConfig, led Ledger) Stage {
	return ParseStageWith(cfg, led, nil)
}

// ParseStageWith is ParseStage that also enforces partner agreements (nil:
// none): Admit before the walk, Message per message, CheckInterchange
// after it, and Finish with the decision, which sends the
// acknowledgements agreed (positive ones as outputs).
func ParseStageWith(cfg EDIFACTConfig, led Ledger, ags Agreements) Stage {
	parse := parseHandler(cfg, led, ags)
	return Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		keys, err := parse(ctx, m)
		if ags != nil {
			err = finishAgreements(ctx, ags, m, err)
		}
		if err == nil && len(keys) > 0 {
			// The ledger's records are stored when the worker publishes
			// the outputs (after every stage succeeded), and awaited with
			// them before the interchange is acked.
			origin := wire.MsgRef{Stream: m.Stream, Seq: m.Seq}.String()
			m.CommitOnSuccess(func() func(context.Context) error { return led.Commit(keys, origin) })
		}
		return err
	}}
}

// finishAgreements hands the stage's decision to the agreements, which
// send the acknowledgements agreed (positive ones as outputs).
func finishAgreements(ctx context.Context, ags Agreements, m *Message, err error) error {
	origin := wire.MsgRef{Stream: m.Stream, Seq: m.Seq}.String()
	corr := cmp.Or(m.Header.Get(wire.HdrCorrelationID), wire.CorrelationID(m.Stream, m.Seq))
	var f *Failure
	if err != nil {
		if !errors.As(err, &f) || f.Class != Permanent {
			return err // duplicates, transient and unclassified failures: no decision yet
		}
		if _, aerr := ags.Finish(ctx, m.Partner, origin, corr, m.Data, nil, err); aerr != nil {
			return TransientError(f.Cause, fmt.Errorf("%w; %v", err, aerr))
		}
		return err
	}
	acks, aerr := ags.Finish(ctx, m.Partner, origin, corr, m.Data, m.doc, nil)
	if aerr != nil {
		m.outputs = nil
		return TransientError("", aerr)
	}
	for _, a := range acks {
		m.Emit(a.Subject, a.Header, a.Data)
	}
	return nil
}

// parseHandler walks, checks and renders an interchange; with a ledger it
// returns the keys to record once the stage has succeeded.
func parseHandler(cfg EDIFACTConfig, led Ledger, ags Agreements) func(context.Context, *Message) ([]LedgerKey, error) {
	return func(ctx context.Context, m *Message) ([]LedgerKey, error) {
		opts := cfg.Options(m.Partner)
		if ags != nil {
			if err := ags.Admit(m.Partner, m.Header, m.Data, opts); err != nil {
				return nil, permanent(err)
			}
		}
		// One pass of Walk renders each message as soon as its trailer is
		// checked. Walk may hand over messages of an interchange that fails
		// later (a wrong UNZ count), but nothing leaves the stage before
		// the whole input is checked: the outputs are queued on m, and the
		// worker publishes them only when the stage returns nil (it drops
		// the outputs of a failed attempt). All or nothing is kept without
		// a second walk. Memory is the parsed segments of one message at a
		// time, plus the JSON of every message until the worker has
		// published them (it publishes them together, then acks); the
		// guard's max_size bounds that.
		r := renderer{m: m, corr: cmp.Or(m.Header.Get(wire.HdrCorrelationID), wire.CorrelationID(m.Stream, m.Seq)),
			seq: strconv.FormatUint(m.Seq, 10), ags: ags}
		doc, err := edifact.Walk(m.Data, opts, func(em *edifact.Message) error { return r.render(ctx, em) })
		if err != nil {
			m.outputs = nil
			var f *Failure
			if errors.As(err, &f) || ctx.Err() != nil {
				return nil, err
			}
			return nil, permanent(err)
		}
		if r.n == 0 {
			return nil, PermanentError(wire.CauseSchema, fmt.Errorf("the interchange holds no message"))
		}
		if ags != nil {
			for _, ich := range doc.Interchanges {
				if err := ags.CheckInterchange(m.Partner, ich); err != nil {
					m.outputs = nil
					return nil, permanent(err)
				}
			}
			m.doc = doc
		}
		m.MessageID = r.firstRef
		if led == nil {
			return nil, nil
		}
		keys := LedgerKeys(m.Partner, doc)
		if err := checkLedger(led, m, keys); err != nil {
			m.outputs = nil
			return nil, err
		}
		return keys, nil
	}
}

// checkLedger says whether the interchange was processed before: a
// *DuplicateError when every one of its envelopes was, by another message
// (the ledger answers from memory). x-replay-force overrides the ledger
// only with the grant of an operator's forced replay: any producer can
// set a header.
func checkLedger(led Ledger, m *Message, keys []LedgerKey) error {
	if len(keys) == 0 {
		return nil
	}
	if m.Header.Get(wire.HdrReplayForce) == "true" {
		forced, err := led.Granted(m.Header.Get(wire.HdrReplayedFrom), audit.PayloadHash(m.Data))
		if err != nil {
			return &UnavailableError{Err: fmt.Errorf("interchange ledger: %w", err)}
		}
		if forced {
			return nil
		}
	}
	origin := wire.MsgRef{Stream: m.Stream, Seq: m.Seq}.String()
	for _, k := range keys {
		dup, err := led.Duplicate(k, origin)
		if err != nil {
			return &UnavailableError{Err: fmt.Errorf("interchange ledger: %w", err)}
		}
		if !dup {
			return nil
		}
	}
	return &DuplicateError{Keys: keys}
}

// permanent is err as a permanent failure of the cause it names (the
// edifact package's errors say schema, the partner package's theirs).
func permanent(err error) error {
	var c Causer
	if errors.As(err, &c) {
		return PermanentError(c.Cause(), err)
	}
	return PermanentError(wire.CauseSchema, err)
}

// renderer turns the messages of one interchange into outputs.
type renderer struct {
	m        *Message
	carry    nats.Header // the producer's headers every output carries
	carried  bool
	corr     string
	seq      string
	n        int
	firstRef string
	// the subject of the last message type, reused for the next message
	// of the same type (an interchange usually holds one type)
	typ, subject string

	ags Agreements
}

// parsedHeaders is how many headers an output carries; the worker adds
// Nats-Msg-Id.
const parsedHeaders = 7

func (r *renderer) render(ctx context.Context, em *edifact.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.n++
	body, err := edifact.MessageJSON(em)
	if err != nil {
		return PermanentError(wire.CauseSchema, fmt.Errorf("message %d (%s): %w", r.n, em.Ref, err))
	}
	ich := em.Interchange
	if r.n == 1 {
		r.firstRef = ich.ControlRef
	}
	if em.Type != r.typ || r.subject == "" {
		r.typ, r.subject = em.Type, wire.ParsedSubject(r.m.Partner, wire.SubjectToken(em.Type))
	}
	// One allocation for the values instead of one per header; room in
	// the map for the dedupe id the worker adds.
	v := [parsedHeaders]string{r.m.Partner, ich.ControlRef, em.Ref, em.Type, ich.Standard, r.seq, r.corr}
	vals := v[:]
	if !r.carried {
		r.carry, r.carried = carriedHeaders(r.m.Header), true
	}
	h := make(nats.Header, parsedHeaders+1+len(r.carry))
	for k, vs := range r.carry {
		h[k] = vs
	}
	for i, k := range [parsedHeaders]string{wire.HdrPartnerID, wire.HdrMessageID, wire.HdrMessageRef, wire.HdrMessageType,
		wire.HdrStandard, wire.HdrOriginalSeq, wire.HdrCorrelationID} {
		h[k] = vals[i : i+1 : i+1]
	}
	r.m.outputs = append(r.m.outputs, &nats.Msg{Subject: r.subject, Header: h, Data: body})
	if r.ags != nil {
		if err := r.ags.Message(ctx, r.m.Partner, em, body); err != nil {
			return permanent(err)
		}
	}
	return nil
}

// peekControlRef reads only the interchange header of a payload to name
// the interchange on a quarantine copy. It reads at most two segments of
// bounded size, so a hostile payload cannot make it expensive.
func peekControlRef(data []byte) string {
	r := edifact.NewReader(bytes.NewReader(data))
	r.MaxSegmentLen = 4096
	r.MaxElementLen = 512
	for i := 0; i < 2; i++ {
		seg, err := r.Read()
		if err != nil {
			return ""
		}
		switch seg.Tag {
		case "UNB":
			return seg.Value(5, 1)
		case "ISA":
			return seg.Value(13, 1)
		}
	}
	return ""
}

// LedgerKeys are the ledger keys of an interchange document sent by partner.
func LedgerKeys(partner string, doc *edifact.Document) []LedgerKey {
	keys := make([]LedgerKey, 0, len(doc.Interchanges))
	for _, ich := range doc.Interchanges {
		keys = append(keys, LedgerKey{Partner: partner, Sender: ich.Sender.ID, Recipient: ich.Recipient.ID, ControlRef: ich.ControlRef})
	}
	return keys
}

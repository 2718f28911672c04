package parse

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/wire"
)

// Stage is the built-in stage: guard, parse and envelope checks, then
// one JSON view per message (UNH..UNT or ST..SE) on
// edi.parsed.<partner>.<type>. Every refusal is permanent with cause
// schema: retrying a broken interchange cannot help.
//
// With a ledger, an interchange whose every envelope was processed before
// is a duplicate (a replay, or the partner sending it again): the stage
// returns a *hub.DuplicateError and the worker acks it without outputs,
// unless the message carries x-replay-force: true.
func Stage(cfg hub.EDIFACTConfig, led Ledger) hub.Stage {
	return StageWith(cfg, led, nil)
}

// StageWith is Stage that also enforces partner agreements (nil: none):
// Admit before the walk, Message per message, CheckInterchange after it,
// and Finish with the decision, which sends the acknowledgements agreed
// (positive ones as outputs).
func StageWith(cfg hub.EDIFACTConfig, led Ledger, ags Agreements) hub.Stage {
	p := &parser{cfg: cfg, led: led, ags: ags}
	if ags == nil {
		return hub.Stage{Name: "parse", Handle: func(ctx context.Context, m *hub.Message) error {
			_, keys, err := p.parse(ctx, m)
			if err == nil {
				commitOnSuccess(led, m, keys)
			}
			return err
		}}
	}
	return hub.Stage{Name: "parse", Handle: func(ctx context.Context, m *hub.Message) error {
		doc, keys, err := p.parse(ctx, m)
		origin := wire.MsgRef{Stream: m.Stream, Seq: m.Seq}.String()
		corr := cmp.Or(m.Header.Get(wire.HdrCorrelationID), wire.CorrelationID(m.Stream, m.Seq))
		var f *hub.Failure
		if err != nil {
			if !errors.As(err, &f) || f.Class != hub.Permanent {
				return err // duplicates, transient and unclassified failures: no decision yet
			}
			if _, aerr := ags.Finish(ctx, m.Partner, origin, corr, m.Data, nil, err); aerr != nil {
				return hub.TransientError(f.Cause, fmt.Errorf("%w; %v", err, aerr))
			}
			return err
		}
		acks, aerr := ags.Finish(ctx, m.Partner, origin, corr, m.Data, doc, nil)
		if aerr != nil {
			m.DropOutputs()
			return hub.TransientError("", aerr)
		}
		for _, a := range acks {
			m.Emit(a.Subject, a.Header, a.Data)
		}
		commitOnSuccess(led, m, keys)
		return nil
	}}
}

// parser is the stage's settings: the partner's parse options, the
// ledger and the agreements (each may be nil).
type parser struct {
	cfg hub.EDIFACTConfig
	led Ledger
	ags Agreements
}

// parse runs the stage on m. The document it returns (for the agreements'
// Finish) is set only when the stage has agreements and succeeded; the
// keys are those to record in the ledger once the attempt succeeds.
func (p *parser) parse(ctx context.Context, m *hub.Message) (*edifact.Document, []LedgerKey, error) {
	cfg, led, ags := p.cfg, p.led, p.ags
	opts := cfg.Options(m.Partner)
	if ags != nil {
		if err := ags.Admit(m.Partner, m.Header, m.Data, opts); err != nil {
			return nil, nil, permanent(err)
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
		m.DropOutputs()
		var f *hub.Failure
		if errors.As(err, &f) || ctx.Err() != nil {
			return nil, nil, err
		}
		return nil, nil, permanent(err)
	}
	if r.n == 0 {
		return nil, nil, hub.PermanentError(wire.CauseSchema, fmt.Errorf("the interchange holds no message"))
	}
	var agreed *edifact.Document
	if ags != nil {
		for _, ich := range doc.Interchanges {
			if err := ags.CheckInterchange(m.Partner, ich); err != nil {
				m.DropOutputs()
				return nil, nil, permanent(err)
			}
		}
		agreed = doc
	}
	m.MessageID = r.firstRef
	if led == nil {
		return agreed, nil, nil
	}
	keys := LedgerKeys(m.Partner, doc)
	if err := checkLedger(led, m, keys); err != nil {
		m.DropOutputs()
		return nil, nil, err
	}
	return agreed, keys, nil
}

// permanent is err as a permanent failure of the cause it names (the
// edifact package's errors say schema, the partner package's theirs).
func permanent(err error) error {
	var c hub.Causer
	if errors.As(err, &c) {
		return hub.PermanentError(c.Cause(), err)
	}
	return hub.PermanentError(wire.CauseSchema, err)
}

// renderer turns the messages of one interchange into outputs.
type renderer struct {
	m        *hub.Message
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
		return hub.PermanentError(wire.CauseSchema, fmt.Errorf("message %d (%s): %w", r.n, em.Ref, err))
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
		r.carry, r.carried = r.m.CarriedHeaders(), true
	}
	h := make(nats.Header, parsedHeaders+1+len(r.carry))
	for k, vs := range r.carry {
		h[k] = vs
	}
	for i, k := range [parsedHeaders]string{wire.HdrPartnerID, wire.HdrMessageID, wire.HdrMessageRef, wire.HdrMessageType,
		wire.HdrStandard, wire.HdrOriginalSeq, wire.HdrCorrelationID} {
		h[k] = vals[i : i+1 : i+1]
	}
	r.m.Emit(r.subject, h, body)
	if r.ags != nil {
		if err := r.ags.Message(ctx, r.m.Partner, em, body); err != nil {
			return permanent(err)
		}
	}
	return nil
}

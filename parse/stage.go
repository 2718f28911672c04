package parse

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/hub"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Options are the parse stage's dependencies; nil fields mean none.
type Options struct {
	// Ledger: with one, an interchange whose every envelope was processed
	// before is a duplicate (a replay, or the partner sending it again):
	// the stage returns a *hub.DuplicateError and the worker acks it
	// without outputs, unless an operator forced the replay.
	Ledger Ledger
	// Agreements are the partner profiles enforced (partner.Registry).
	Agreements Agreements
	// JS publishes the negative acknowledgements of a refused interchange
	// before the stage returns the refusal (the worker then dead-letters
	// it). Nil: they are logged, not sent.
	JS     js.JetStream
	Logger zerolog.Logger
	// EDIFACT, when set, are the resolved parse options of every message
	// (the forensic child's, from the hub); nil: cfg.Options(partner).
	EDIFACT *edifact.Options
	// Keys sign the dead letter of a partially accepted interchange
	// (x-hub-mac), so `dlq replay` knows it for the hub's; nil: unsigned.
	Keys *audit.Keyring
	// Budget admits interchanges by their estimated memory (budget.go);
	// nil: one of Config.MemoryBudget bytes for this stage.
	Budget *Budget
	// Registry gets the budget's metrics; nil: not registered.
	Registry prometheus.Registerer
}

// Stage is the built-in stage without partner agreements: guard, parse
// and envelope checks, then one JSON view per message (UNH..UNT or
// ST..SE) on edi.parsed.<partner>.<type>; the ledger's duplicate check
// when led is not nil.
func Stage(cfg Config, led Ledger) hub.Stage {
	return New(cfg, &Options{Ledger: led})
}

// New is the built-in stage: it asks Decide and acts on the decision.
// Accepted: the outputs and the positive acknowledgements are queued on
// the message (the worker publishes them together, then acks) and the
// ledger records are committed with them. Refused: the negative
// acknowledgements are published first (deduplicated by the INGEST
// message, so a redelivery does not send them twice), then the refusal
// is returned for the worker to dead-letter.
func New(cfg Config, o *Options) hub.Stage {
	var opts Options
	if o != nil {
		opts = *o
	}
	w := With{Config: cfg, Options: opts.EDIFACT, Ledger: opts.Ledger, Agreements: opts.Agreements}
	log := opts.Logger.With().Str("component", "parse").Logger()
	budget := opts.Budget
	if budget == nil {
		budget = NewBudget(cfg.MemoryBudget)
		log.Debug().Int64("memory_budget", budget.Limit()).Str("from", budget.Source()).
			Msg("interchanges are admitted to the parse stage while their estimated peaks fit")
	}
	if opts.Registry != nil {
		opts.Registry.MustRegister(budget.Collectors()...)
	}
	return hub.Stage{Name: StageName, ControlRef: ControlRef, Handle: func(ctx context.Context, m *hub.Message) error {
		release, err := admitLogged(ctx, budget, m, log, streamsViews(w.Agreements, m.Partner, len(m.Data)))
		if err != nil {
			return err
		}
		defer release()
		call := &struct {
			in Input
			d  Decision
		}{in: Input{Partner: m.Partner, Stream: m.Stream, Seq: m.Seq, Header: m.Header, Data: m.Data, Carry: m.CarriedHeaders()}}
		in := &call.in
		if n, ok := w.Agreements.(AckNumberer); ok {
			in.AckRef = n.NextAckRef(ctx, m.Partner)
		}
		d := decideInto(ctx, in, w, &call.d)
		if d.MessageID != "" { // a duplicate is named too
			m.MessageID = d.MessageID
		}
		if w.Agreements != nil {
			w.Agreements.Decided(d.Err, d.Acks)
		}
		if d.Err != nil {
			m.DropOutputs()
			if len(d.Acks) > 0 {
				if err := publishNegative(ctx, opts.JS, log, in, d.Acks); err != nil {
					cause := wire.CauseUnknown
					if f := (*hub.Failure)(nil); errors.As(d.Err, &f) {
						cause = f.Cause
					}
					return hub.TransientError(cause, fmt.Errorf("%w; %v", d.Err, err))
				}
			}
			return d.Err
		}
		m.EmitAll(d.Outputs)
		for _, a := range d.Acks {
			m.Emit(a.Subject, a.Header, a.Data)
		}
		if dl := d.DeadLetter; dl != nil {
			// published with the outputs (the same dedupe ids): the
			// refused messages end in the DLQ once, beside the accepted
			// ones' views
			dl.Header.Set(wire.HdrDetectedAt, time.Now().UTC().Format(time.RFC3339Nano))
			dl.Header.Set(wire.HdrAttempts, strconv.FormatUint(max(m.Delivered, 1), 10))
			audit.SignCopy(opts.Keys, dl.Header, dl.Data)
			m.Emit(dl.Subject, dl.Header, dl.Data)
			log.Info().Str("partner", m.Partner).Uint64("seq", m.Seq).Int("refused", len(d.Refused)).Int("messages", d.Messages).
				Str("subject", dl.Subject).Msg("interchange partially accepted: refused messages dead-lettered")
		}
		commitOnSuccess(w.Ledger, m, in, d.Keys)
		return nil
	}}
}

// admit waits for room in the budget for half of what is left of the
// stage's deadline at most: an interchange that waited that long is
// delivered again later (hub.UnavailableError, not charged to it), so the
// wait never turns into a stage timeout charged to the message.
//
// streamed: the interchange's large messages are rendered while read
// (streamsViews), estimated by EstimateStreamed.
func admit(ctx context.Context, b *Budget, size int, streamed bool) (func(), error) {
	if size < budgetFrom { // not counted: no estimate (it reads the runtime's metrics)
		return noRelease, nil
	}
	estimate := estimateFor(size, streamed)
	wctx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(dl)/2))
		defer cancel()
	}
	start := time.Now()
	release, err := b.AdmitEstimate(wctx, size, estimate)
	if err == nil {
		return release, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, &hub.UnavailableError{Err: fmt.Errorf("parse: an interchange of %d bytes (estimated peak %d MiB) waited %s for room in the memory budget (%s): delivered again",
		size, estimate>>20, time.Since(start).Round(time.Millisecond), b)}
}

// publishNegative publishes a refusal's acknowledgements with dedupe ids
// from the INGEST message (INGEST:42:ack:0).
func publishNegative(ctx context.Context, j js.JetStream, log zerolog.Logger, in *Input, acks []*nats.Msg) error {
	if j == nil {
		log.Warn().Str("partner", in.Partner).Int("acks", len(acks)).Msg("negative acknowledgements not sent: no JetStream")
		return nil
	}
	origin := in.origin()
	if _, err := ejs.PublishAll(ctx, j, acks, func(i int) string { return wire.AckMsgID(origin, i) }); err != nil {
		return fmt.Errorf("negative acknowledgement: %w", err)
	}
	return nil
}

// renderer turns the messages of one interchange into outputs.
type renderer struct {
	in       *Input
	d        *Decision
	corr     string
	seq      string
	firstRef string
	// the subject of the last message type, reused for the next message
	// of the same type (an interchange usually holds one type)
	typ, subject string

	ags      Agreements
	acceptor MessageAcceptor // nil: one refused message refuses the interchange
}

// parsedHeaders is how many headers an output carries; the worker adds
// Nats-Msg-Id.
const parsedHeaders = 7

// render makes the output of em, whose view is body, or when body is nil
// the view MessageJSON renders from em's segments.
func (r *renderer) render(ctx context.Context, em *edifact.Message, body []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d := r.d
	d.Messages++
	if body == nil {
		var err error
		if body, err = edifact.MessageJSON(em); err != nil {
			return hub.PermanentError(wire.CauseSchema, fmt.Errorf("message %d (%s): %w", d.Messages, em.Ref, err))
		}
	}
	ich := em.Interchange
	if d.Messages == 1 {
		r.firstRef = ich.ControlRef
	}
	if em.Type != r.typ || r.subject == "" {
		r.typ, r.subject = em.Type, wire.ParsedSubject(r.in.Partner, wire.SubjectToken(em.Type))
		if d.Types == nil {
			d.Types = d.inline.types[:0]
		}
		if !slices.Contains(d.Types, em.Type) {
			d.Types = append(d.Types, em.Type)
		}
	}
	// One allocation for the values instead of one per header; room in
	// the map for the dedupe id the worker adds.
	var vals []string
	var out *nats.Msg
	if in := &d.inline; !in.used { // the first message's, in the Decision
		in.used, vals, out = true, in.vals[:], &in.msg
		d.Outputs = in.outs[:0]
	} else {
		vals, out = make([]string, parsedHeaders), &nats.Msg{}
	}
	copy(vals, []string{r.in.Partner, ich.ControlRef, em.Ref, em.Type, ich.Standard, r.seq, r.corr})
	h := make(nats.Header, parsedHeaders+1+len(r.in.Carry))
	for k, vs := range r.in.Carry {
		h[k] = vs
	}
	for i, k := range [parsedHeaders]string{wire.HdrPartnerID, wire.HdrMessageID, wire.HdrMessageRef, wire.HdrMessageType,
		wire.HdrStandard, wire.HdrOriginalSeq, wire.HdrCorrelationID} {
		h[k] = vals[i : i+1 : i+1]
	}
	out.Subject, out.Header, out.Data = r.subject, h, body
	d.Outputs = append(d.Outputs, out)
	if r.ags != nil {
		if err := r.ags.Message(ctx, r.in.Partner, em, body); err != nil {
			if r.acceptor != nil && r.acceptor.AcceptsMessage(r.in.Partner, err) {
				d.Outputs = d.Outputs[:len(d.Outputs)-1]
				d.Refused = append(d.Refused, Refusal{Ref: em.Ref, Type: em.Type, Err: permanent(err)})
				return nil
			}
			return permanent(err)
		}
	}
	return nil
}

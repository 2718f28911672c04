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
	"github.com/edihub/edihub/ubl"
	"github.com/edihub/edihub/wire"
)

// Input is one interchange to decide, as the INGEST stream holds it.
type Input struct {
	// Partner is the partner of the stored subject (edi.ingest.<id>),
	// never a header's.
	Partner string
	// Stream and Seq name the INGEST message (the ledger's origin, the
	// acknowledgements' references and dedupe ids).
	Stream string
	Seq    uint64
	Header nats.Header
	Data   []byte
	// Carry are the producer's headers every output carries
	// (hub.Message.CarriedHeaders); nil: none.
	Carry nats.Header
	// AckRef numbers the acknowledgements (AckNumberer.NextAckRef, which
	// the stage reserves); 0: from Seq.
	AckRef uint64

	orig string // origin, once made
}

// origin is the stream id of the message, INGEST:42 (made once: the
// ledger's check and its commit both name it).
func (in *Input) origin() string {
	if in.orig == "" {
		in.orig = wire.MsgRef{Stream: in.Stream, Seq: in.Seq}.String()
	}
	return in.orig
}

// correlation is the message's correlation id, or the one the hub derives.
func (in *Input) correlation() string {
	return cmp.Or(in.Header.Get(wire.HdrCorrelationID), wire.CorrelationID(in.Stream, in.Seq))
}

// With is what an interchange is decided with; nil fields mean none.
type With struct {
	// Config is the parse settings (hub.edifact).
	Config Config
	// Options, when set, are the partner's parse options already resolved
	// from a Config (the forensic child gets them from the hub).
	Options *edifact.Options
	// Ledger answers whether the interchange was processed before
	// (Duplicate, Granted: reads only; Decide never commits).
	Ledger Ledger
	// Agreements are the partner profiles enforced (partner.Registry).
	Agreements Agreements
}

// Decision is the verdict on one interchange, as data: Decide sends,
// records and counts nothing. The parse stage acts on it (emits Outputs
// and Acks, or publishes Acks and returns Err); `dlq replay --dry-run`
// and the forensic analyzer report it.
type Decision struct {
	// Err is the verdict: nil when accepted; a permanent *hub.Failure
	// (dead-lettered under its cause); a *hub.DuplicateError (acked
	// without outputs); a *hub.UnavailableError (the ledger did not
	// answer: delivered again); a transient failure or the context's
	// error.
	Err error
	// Outputs are the JSON views, one per message (accepted only).
	Outputs []*nats.Msg
	// Acks are the acknowledgements the partner's profile agrees: the
	// positive ones when accepted (they travel with the outputs), the
	// negative ones when refused permanently (published before the dead
	// letter, Nats-Msg-Id wire.AckMsgID(origin, i)).
	Acks []*nats.Msg
	// Keys name the interchanges in the ledger (accepted, or a
	// duplicate): the stage records them once the outputs are stored,
	// when it has a ledger.
	Keys []LedgerKey
	// MessageID is the first interchange's control reference (a UBL
	// document's BT-1).
	MessageID string
	// Standard is EDIFACT, X12 or UBL (empty when the EDIFACT guard
	// refused it).
	Standard string
	// Messages counts the messages read, Types their distinct types.
	Messages int
	Types    []string
	// Refused are the messages refused alone of an accepted interchange
	// (MessageAcceptor: a profile's accept: message), in order; their
	// views are not among Outputs.
	Refused []Refusal
	// DeadLetter, with Refused, is the interchange's one dead letter
	// naming them (x-refused-messages) on edi.parse.dlq.<cause of the
	// first>: the stage publishes it with the outputs, so a redelivery
	// stores it once (the outputs' dedupe ids).
	DeadLetter *nats.Msg
	// Findings are a UBL document's validation findings (warnings of an
	// accepted one too); nil for EDIFACT and X12.
	Findings []ubl.Finding

	// inline is the room of the walk's renderer and of the first message's
	// output, allocated with the Decision: an interchange of one message
	// (the common case) costs no allocation of its own for them.
	inline struct {
		r     renderer
		used  bool // msg and vals given to an output
		msg   nats.Msg
		vals  [parsedHeaders]string
		outs  [1]*nats.Msg
		types [1]string
		keys  [1]LedgerKey
	}
}

// Refusal is one message refused alone.
type Refusal struct {
	Ref, Type string
	Err       error // permanent, with its cause
}

// keepDuplicateKeys are the keys a refusal keeps: a duplicate's only.
func keepDuplicateKeys(err error, keys []LedgerKey) []LedgerKey {
	var dup *hub.DuplicateError
	if errors.As(err, &dup) {
		return keys
	}
	return nil
}

// Cause is the DLQ cause of a permanent refusal, "" otherwise.
func (d *Decision) Cause() string {
	var f *hub.Failure
	if errors.As(d.Err, &f) && f.Class == hub.Permanent {
		return f.Cause
	}
	return ""
}

// Decide runs the built-in parse stage's decision on one interchange:
// the agreements' Admit (profile, signature, strictness), the guard and
// one edifact.Walk rendering each message's JSON view and asking the
// agreements about it (envelope, type, directory, rules), the
// interchanges' envelopes, the ledger; then the acknowledgements agreed.
// Every refusal is permanent with the cause it names (schema for the
// edifact package's errors): retrying a broken interchange cannot help.
//
// A UBL document (an XML payload: LooksXML) is decided by decideUBL
// instead, with the MLRs agreed as its acknowledgements.
func Decide(ctx context.Context, in *Input, w With) *Decision {
	return decideInto(ctx, in, w, &Decision{})
}

// decideInto is Decide into d, a zero Decision (the stage allocates it
// with the Input: one allocation for both).
func decideInto(ctx context.Context, in *Input, w With, d *Decision) *Decision {
	if LooksXML(in.Data) {
		doc, findings, err := w.decideUBL(ctx, in, d)
		if err != nil {
			d.Outputs, d.Keys = nil, keepDuplicateKeys(err, d.Keys)
		}
		d.Err = err
		d.Findings = findings
		d.Acks = ublAcks(w, in, doc, findings, err)
		return d
	}
	doc, err := w.decide(ctx, in, d)
	// every message refused alone (accept: message): the interchange is
	// refused, and its acknowledgement names each message's error
	var allRefused error
	if err != nil && doc != nil && len(d.Refused) > 0 {
		errs := make([]error, len(d.Refused))
		for i, r := range d.Refused {
			errs[i] = r.Err
		}
		allRefused = errors.Join(errs...)
	}
	isDup := false
	if err != nil {
		d.Outputs = nil
		// declared here: it escapes, so it is allocated only on a refusal;
		// a duplicate keeps the names of its interchanges
		var dup *hub.DuplicateError
		if isDup = errors.As(err, &dup); !isDup {
			d.Keys = nil
		}
	}
	d.Err = err
	if err != nil {
		d.Refused = nil
	}
	if err == nil && len(d.Refused) > 0 {
		d.DeadLetter = deadLetter(in, d)
	}
	if w.Agreements == nil {
		return d
	}
	acks := w.Agreements.Acks
	if n, ok := w.Agreements.(AckNumberer); ok && in.AckRef != 0 {
		acks = func(partner, origin, corr string, data []byte, doc *edifact.Document, failure error) []*nats.Msg {
			return n.AcksAt(partner, origin, corr, data, doc, failure, in.AckRef)
		}
	}
	var f *hub.Failure
	switch {
	case allRefused != nil:
		d.Acks = acks(in.Partner, in.origin(), in.correlation(), in.Data, doc, allRefused)
	case err == nil && len(d.Refused) > 0:
		errs := make([]error, len(d.Refused))
		for i, r := range d.Refused {
			errs[i] = r.Err
		}
		d.Acks = acks(in.Partner, in.origin(), in.correlation(), in.Data, doc, errors.Join(errs...))
	case err == nil:
		d.Acks = acks(in.Partner, in.origin(), in.correlation(), in.Data, doc, nil)
	case errors.As(err, &f) && f.Class == hub.Permanent:
		d.Acks = acks(in.Partner, in.origin(), in.correlation(), in.Data, nil, err)
	case isDup:
		if da, ok := w.Agreements.(DuplicateAcker); ok {
			d.Acks = da.DuplicateAcks(in.Partner, in.origin(), in.correlation(), in.Data)
		}
	}
	// transient and unclassified failures: no decision yet, nothing to
	// acknowledge
	return d
}

func (w With) decide(ctx context.Context, in *Input, d *Decision) (*edifact.Document, error) {
	opts := w.Config.Options(in.Partner)
	if w.Options != nil {
		o := *w.Options // Admit may change the strictness: a copy
		opts = &o
	}
	ags := w.Agreements
	if ags != nil {
		if err := ags.Admit(in.Partner, in.Header, in.Data, opts); err != nil {
			return nil, permanent(err)
		}
	}
	// One pass of Walk renders each message as soon as its trailer is
	// checked. Walk may hand over messages of an interchange that fails
	// later (a wrong UNZ count), but nothing is accepted before the
	// whole input is checked: a refusal drops the outputs. All or nothing
	// is kept without a second walk. Memory is the parsed segments of one
	// message at a time, plus the JSON of every message until the worker
	// has published them; the guard's max_size bounds that. Where the
	// agreements read no segment (streamsViews), a large message's view is
	// rendered while it is read and its segments are not kept at all.
	r := &d.inline.r
	*r = renderer{in: in, d: d, corr: in.correlation(), seq: strconv.FormatUint(in.Seq, 10), ags: ags}
	r.acceptor, _ = ags.(MessageAcceptor)
	var doc *edifact.Document
	var err error
	if streamsViews(ags, in.Partner, len(in.Data)) {
		doc, err = edifact.WalkViews(in.Data, opts, func(em *edifact.Message, view []byte) error { return r.render(ctx, em, view) })
	} else {
		doc, err = edifact.Walk(in.Data, opts, func(em *edifact.Message) error { return r.render(ctx, em, nil) })
	}
	if doc != nil {
		d.Standard = doc.Standard
	}
	if err != nil {
		var f *hub.Failure
		if errors.As(err, &f) || ctx.Err() != nil {
			return nil, err
		}
		return nil, permanent(err)
	}
	if d.Messages == 0 {
		return nil, hub.PermanentError(wire.CauseSchema, fmt.Errorf("the interchange holds no message"))
	}
	if len(d.Refused) == d.Messages { // every message refused: the interchange is
		return doc, d.Refused[0].Err // (doc for the acknowledgement only)
	}
	if ags != nil {
		for _, ich := range doc.Interchanges {
			if err := ags.CheckInterchange(in.Partner, ich); err != nil {
				return nil, permanent(err)
			}
		}
	}
	d.MessageID = r.firstRef
	d.Keys = appendLedgerKeys(d.inline.keys[:0], in.Partner, doc) // one interchange: no allocation
	if w.Ledger == nil {
		return doc, nil
	}
	if err := checkLedger(w.Ledger, in, d.Keys); err != nil {
		return nil, err
	}
	return doc, nil
}

// streamsViews tells whether the walk may render a large message's view
// while reading it and drop its segments (edifact.WalkViews): for an input
// of budgetFrom bytes and up (a smaller one has no message large enough to
// stream, and keeps the small interchange's path) whose agreements read no
// segment of its messages. Agreements that do not say are taken to read
// them.
func streamsViews(ags Agreements, partner string, size int) bool {
	if size < budgetFrom {
		return false
	}
	if ags == nil {
		return true
	}
	sr, ok := ags.(SegmentReader)
	return ok && !sr.ReadsSegments(partner)
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

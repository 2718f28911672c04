package parse

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
)

// Agreements are the partner profiles the built-in parse stage enforces
// (partner.Registry implements it; cmd/edihub wires it). Errors they
// return say their DLQ cause (hub.Causer) and may carry headers for the
// dead letter (hub.FailureHeaderer).
type Agreements interface {
	// Admit is asked before the interchange is read: an unknown partner, a
	// missing or wrong signature. It may change opts (the profile's
	// strictness).
	Admit(partner string, h nats.Header, data []byte, opts *edifact.Options) error
	// Message is asked for each message with its JSON view: the envelope
	// and the message type agreed, the business rules.
	Message(ctx context.Context, partner string, em *edifact.Message, view []byte) error
	// CheckInterchange is asked after the walk for every interchange
	// (those without messages too).
	CheckInterchange(partner string, ich *edifact.Interchange) error
	// Acks builds the acknowledgements agreed for the decision (failure
	// nil: accepted, doc its document) and sends nothing: Decide returns
	// them as data.
	Acks(partner, origin, corr string, data []byte, doc *edifact.Document, failure error) []*nats.Msg
	// Decided is told what the stage acts on (the refusal, nil when
	// accepted, and the acknowledgements it sends): for the agreements'
	// metrics. The dry run and the forensic analyzer do not call it.
	Decided(failure error, acks []*nats.Msg)
}

// AckNumberer is Agreements whose acknowledgements are numbered from a
// per-partner counter (partner.Registry, KV edihub-ack-refs), so a
// partner's control references keep counting up when INGEST starts again.
// Reserving a number writes, so the stage does it before Decide and hands
// the number in (Input.AckRef); the dry run does not, and its
// acknowledgements are numbered from the INGEST sequence.
type AckNumberer interface {
	NextAckRef(ctx context.Context, partner string) uint64
	AcksAt(partner, origin, corr string, data []byte, doc *edifact.Document, failure error, ref uint64) []*nats.Msg
}

// DuplicateAcker is Agreements that answer an interchange the ledger has
// seen (a negative CONTRL with 0085 26, a TA1 with 025), so a partner that
// resends because its acknowledgement never came learns why.
type DuplicateAcker interface {
	DuplicateAcks(partner, origin, corr string, data []byte) []*nats.Msg
}

// MessageAcceptor is Agreements that may refuse one message of an
// interchange alone (a profile's accept: message): AcceptsMessage tells
// whether err, the refusal of a message by Message, refuses that message
// only. The other messages are then published, the refused ones named in
// the acknowledgements and in one dead letter of the interchange.
type MessageAcceptor interface {
	AcceptsMessage(partner string, err error) bool
}

// SegmentReader is Agreements that say whether they read the segments of
// a partner's messages (edifact.Message.Segments: a directory validation,
// the built-in rules) or only their envelope and JSON view (the CEL rules).
// For a partner whose agreements read none, the stage renders a large
// message's view while reading it and keeps none of its segments
// (edifact.WalkViews): Message then gets it with nil Segments.
type SegmentReader interface {
	ReadsSegments(partner string) bool
}

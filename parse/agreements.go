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
	// Finish is told the decision (failure nil: accepted). It returns the
	// positive acknowledgements to emit with the outputs; negative ones it
	// publishes itself, deduplicated by origin, before the dead letter.
	Finish(ctx context.Context, partner, origin, corr string, data []byte, doc *edifact.Document, failure error) ([]*nats.Msg, error)
}

package partner

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/wire"
)

// Decision is what the parse stage would decide for one interchange of a
// partner (`edihub partner check`).
type Decision struct {
	Accepted bool   `json:"accepted"`
	Cause    string `json:"cause,omitempty"`  // DLQ cause when refused (or some messages refused)
	Reason   string `json:"reason,omitempty"` // x-reject-reason
	Rule     string `json:"rule,omitempty"`
	KeyID    string `json:"key_id,omitempty"`
	Error    string `json:"error,omitempty"` // x-error-msg
	Messages int    `json:"messages"`
	// Refused are the messages refused alone (accept: message) of an
	// accepted interchange: their references, in order.
	Refused []string `json:"refused,omitempty"`
	// Acks are the acknowledgements it would send.
	Acks []*nats.Msg `json:"-"`
}

// Try decides data as the parse stage does, with the same steps in the
// same order (Admit, the walk with each message's JSON view checked,
// CheckInterchange), and builds the acknowledgements without sending
// them. opts are the partner's parse options (the parse section).
func (r *Registry) Try(ctx context.Context, partner string, h nats.Header, data []byte, opts *edifact.Options) Decision {
	if h == nil {
		h = nats.Header{}
	}
	var d Decision
	var refused []error
	doc, err := r.try(ctx, partner, h, data, opts, &d.Messages, &refused)
	origin := wire.MsgRef{Stream: wire.DefaultIngestStream, Seq: 1}.String()
	if err == nil && len(refused) > 0 {
		d.Acks = r.Acks(partner, origin, "", data, doc, errors.Join(refused...))
		d.Accepted = true
		var first *Rejection
		if errors.As(refused[0], &first) {
			d.Cause = first.DLQCause // the dead letter's
		}
		for _, e := range refused {
			var rej *Rejection
			if errors.As(e, &rej) {
				d.Refused = append(d.Refused, rej.Message.Ref)
			}
		}
		return d
	}
	if err != nil && doc != nil {
		// every message refused alone: the acknowledgement names each
		// one's error, as the parse stage's does (parse.Decide)
		d.Acks = r.Acks(partner, origin, "", data, doc, errors.Join(refused...))
	} else {
		d.Acks = r.Acks(partner, origin, "", data, doc, err)
	}
	if err == nil {
		d.Accepted = true
		return d
	}
	d.Cause, d.Error = wire.CauseSchema, err.Error()
	var c interface{ Cause() string }
	if errors.As(err, &c) {
		d.Cause = c.Cause()
	}
	var rej *Rejection
	if errors.As(err, &rej) {
		d.Reason, d.Rule, d.KeyID = rej.Reason, rej.Rule, rej.KeyID
	}
	return d
}

// try is the decision; a message refused alone (AcceptsMessage) goes to
// refused and the walk goes on. When every message is refused, the first
// refusal refuses the interchange; the document is returned with it, so
// that the acknowledgement can name every message's error.
func (r *Registry) try(ctx context.Context, partner string, h nats.Header, data []byte, opts *edifact.Options, n *int, refused *[]error) (*edifact.Document, error) {
	if err := r.Admit(partner, h, data, opts); err != nil {
		return nil, err
	}
	doc, err := edifact.Walk(data, opts, func(em *edifact.Message) error {
		*n++
		view, err := edifact.MessageJSON(em)
		if err != nil {
			return err
		}
		if err := r.Message(ctx, partner, em, view); err != nil {
			if !r.AcceptsMessage(partner, err) {
				return err
			}
			*refused = append(*refused, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if *n == 0 {
		return nil, errors.New("schema: the interchange holds no message")
	}
	for _, ich := range doc.Interchanges {
		if err := r.CheckInterchange(partner, ich); err != nil {
			return nil, err
		}
	}
	if len(*refused) == *n {
		return doc, (*refused)[0]
	}
	return doc, nil
}

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
	Cause    string `json:"cause,omitempty"`  // DLQ cause when refused
	Reason   string `json:"reason,omitempty"` // x-reject-reason
	Rule     string `json:"rule,omitempty"`
	KeyID    string `json:"key_id,omitempty"`
	Error    string `json:"error,omitempty"` // x-error-msg
	Messages int    `json:"messages"`
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
	doc, err := r.try(ctx, partner, h, data, opts, &d.Messages)
	d.Acks = r.Acks(partner, wire.MsgRef{Stream: wire.DefaultIngestStream, Seq: 1}.String(), "", data, doc, err)
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

func (r *Registry) try(ctx context.Context, partner string, h nats.Header, data []byte, opts *edifact.Options, n *int) (*edifact.Document, error) {
	if err := r.Admit(partner, h, data, opts); err != nil {
		return nil, err
	}
	doc, err := edifact.Walk(data, opts, func(em *edifact.Message) error {
		*n++
		view, err := edifact.MessageJSON(em)
		if err != nil {
			return err
		}
		return r.Message(ctx, partner, em, view)
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
	return doc, nil
}

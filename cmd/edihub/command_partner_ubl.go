package main

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// checkUBL is partner check for a UBL document: parse.Decide with the
// registry, as the stage decides it (partner.Try reads EDIFACT and X12
// only), in partner check's terms.
func checkUBL(ctx context.Context, id string, h nats.Header, data []byte, cfg parse.Config, r *partner.Registry) partner.Decision {
	dec := parse.Decide(ctx, &parse.Input{Partner: id, Stream: wire.DefaultIngestStream, Seq: 1, Header: h, Data: data},
		parse.With{Config: cfg, Agreements: r})
	d := partner.Decision{Accepted: dec.Err == nil, Cause: dec.Cause(), Messages: dec.Messages, Acks: dec.Acks}
	if dec.Err != nil {
		d.Error = dec.Err.Error()
		var fh hub.FailureHeaderer
		if errors.As(dec.Err, &fh) {
			fhs := fh.FailureHeaders()
			d.Reason, d.Rule, d.KeyID = fhs[wire.HdrRejectReason], fhs[wire.HdrRule], fhs[wire.HdrSignatureKeyID]
		}
	}
	return d
}

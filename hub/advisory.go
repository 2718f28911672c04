package hub

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
)

// maxDeliveriesAdvisory is the part of JetStream's MAX_DELIVERIES advisory
// the backstop needs.
type maxDeliveriesAdvisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

const maxDeliveriesSubject = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>"

// watchAdvisories is the backstop for consumers that do have a MaxDeliver
// (the hub's own never do; downstream apps' may): the server gives up on
// such a message silently, so the hub copies it into quarantine.
func (h *Hub) watchAdvisories(ctx context.Context) error {
	ch := make(chan *nats.Msg, 64)
	sub, err := h.nc.ChanSubscribe(maxDeliveriesSubject, ch)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-ch:
			var a maxDeliveriesAdvisory
			if err := json.Unmarshal(m.Data, &a); err != nil {
				h.log.Warn().Err(err).Msg("unreadable MAX_DELIVERIES advisory")
				continue
			}
			if err := h.quarantineFromAdvisory(ctx, a); err != nil {
				h.log.Error().Err(err).Str("stream", a.Stream).Uint64("seq", a.StreamSeq).Msg("could not copy a max-delivered message into quarantine")
			}
		}
	}
}

func (h *Hub) quarantineFromAdvisory(ctx context.Context, a maxDeliveriesAdvisory) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := h.js.Stream(ctx, a.Stream)
	if err != nil {
		return err
	}
	raw, err := s.GetMsg(ctx, a.StreamSeq)
	if errors.Is(err, js.ErrMsgNotFound) {
		h.log.Warn().Str("stream", a.Stream).Uint64("seq", a.StreamSeq).Msg("max-delivered message is already gone from its stream")
		return nil
	}
	if err != nil {
		return err
	}
	hdr := nats.Header{}
	for k, v := range raw.Header {
		hdr[k] = v
	}
	hdr.Del(HdrMsgID)
	hdr.Set(HdrOriginalTopic, raw.Subject)
	hdr.Set(HdrOriginalStream, a.Stream)
	hdr.Set(HdrOriginalSeq, strconv.FormatUint(a.StreamSeq, 10))
	hdr.Set(HdrPoisonCause, "max-deliveries")
	hdr.Set(HdrAttempts, strconv.FormatUint(a.Deliveries, 10))
	hdr.Set(HdrDetectedAt, time.Now().UTC().Format(time.RFC3339Nano))
	hdr.Set(HdrErrorClass, "max-deliveries")
	hdr.Set(HdrErrorMsg, "consumer "+a.Consumer+" gave up after "+strconv.FormatUint(a.Deliveries, 10)+" deliveries (MaxDeliver)")
	_, err = ejs.Publish(ctx, h.js, &nats.Msg{Subject: poisonSubject("backstop"), Header: hdr, Data: raw.Data},
		ejs.MsgID(a.Stream, a.StreamSeq, "poison"))
	if err != nil {
		return err
	}
	h.met.maxDeliveries.Inc()
	h.met.poison.WithLabelValues("backstop", "max-deliveries").Inc()
	h.alerter.Fire(ctx, Alert{
		Name: "PoisonMessageDetected", Severity: "critical", Partner: a.Consumer,
		Summary: "consumer " + a.Consumer + " on " + a.Stream + " reached MaxDeliver; copied to quarantine",
		Labels:  map[string]string{"stage": "backstop", "stream": a.Stream, "sequence": strconv.FormatUint(a.StreamSeq, 10), "cause": "max-deliveries"},
	})
	return nil
}

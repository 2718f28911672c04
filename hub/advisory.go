package hub

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/hub/headers"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// watchAdvisories is the backstop for consumers that do have a MaxDeliver
// (the hub's own never do; downstream apps' may): the server gives up on
// such a message silently, so the hub copies it into quarantine.
func (h *Hub) watchAdvisories(ctx context.Context) error {
	ch := make(chan *nats.Msg, 64)
	sub, err := h.nc.ChanSubscribe(ejs.MaxDeliveriesSubject, ch)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-ch:
			var a ejs.MaxDeliveriesAdvisory
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

// quarantineFromAdvisory copies a max-delivered message into POISON like
// every other copy: producer headers cleaned, signed, stored with retries
// while the system refuses it (until ctx ends).
func (h *Hub) quarantineFromAdvisory(ctx context.Context, a ejs.MaxDeliveriesAdvisory) error {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := h.js.Stream(rctx, a.Stream)
	if err != nil {
		return err
	}
	raw, err := s.GetMsg(rctx, a.StreamSeq)
	if errors.Is(err, js.ErrMsgNotFound) {
		h.log.Warn().Str("stream", a.Stream).Uint64("seq", a.StreamSeq).Msg("max-delivered message is already gone from its stream")
		return nil
	}
	if err != nil {
		return err
	}
	// The partner comes from the stored subject (INGEST's), never from a
	// header, and the consumer is a label, not a partner.
	c := &hubCopy{kind: "poison", subject: wire.PoisonSubject(backstopStage), header: raw.Header, data: raw.Data, producers: true,
		stream: a.Stream, seq: a.StreamSeq, origStream: a.Stream, origSeq: a.StreamSeq, origTopic: raw.Subject, partition: -1, set: nats.Header{}}
	if p, partner, ok := wire.ParseIngestSubject(raw.Subject); ok {
		c.partner, c.partition = partner, p
	}
	msg := "consumer " + a.Consumer + " gave up after " + strconv.FormatUint(a.Deliveries, 10) + " deliveries (MaxDeliver)"
	headers.SetPoison(c.set, "max-deliveries", "max-deliveries", msg, backstopStage, int(a.Deliveries))
	q := poisonCopy{hubCopy: c, stage: backstopStage, cause: "max-deliveries", attempts: int(a.Deliveries), message: msg,
		labels: map[string]string{"stream": a.Stream, "consumer": a.Consumer}}
	if !h.copy(ctx, c) {
		return ctx.Err()
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	h.auditQuarantine(actx, q)
	h.met.MaxDeliveries.Inc()
	h.quarantined(actx, q)
	return nil
}

// backstopStage names the quarantine subject of max-delivered messages.
const backstopStage = "backstop"

package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// outbound moves a JetStream subject filter to Kafka.
//
// One durable pull consumer per route reads the filter in stream order; a
// batch is produced with the idempotent producer and each message is acked
// only after Kafka acknowledged its record. Records of one key go to one
// Kafka partition and the producer keeps a partition's records in order
// across its own retries, so stream order per partner is Kafka order per
// partition. Messages of a batch that could not be produced are nak'ed
// when the bridge stops, so the next run gets them first, in order.
type outbound struct {
	b    *Bridge
	r    OutRoute
	log  zerolog.Logger
	prod *kgo.Client

	down  outage // produce failures of the batch in flight
	order orderGuard
	fatal error // errors_tolerance none: the message that stops the route

	mu   sync.Mutex
	cons js.Consumer // nil until set up
}

// backlogWait bounds how long a batch read waits to fill up when fewer
// messages than the batch size are pending.
const backlogWait = 20 * time.Millisecond

// outItem is one NATS message on its way to Kafka.
type outItem struct {
	msg       js.Msg
	meta      *js.MsgMetadata
	topic     string
	key       []byte
	hs        []kgo.RecordHeader
	partition int32 // >= 0: the Kafka partition to write to (Spring's DLT naming); -1: by key
	poison    *unmappable
	skip      bool        // the bridge wrote it: acked, never produced
	claim     *wire.Claim // its payload is stored aside: value is it, fetched (claim.go)
	value     []byte
	aside     string // over the max record size: a dead-letter record of its reference, for this reason
	err       error
	done      atomic.Bool // produced (or quarantined): ready to ack
}

func (o *outbound) name() string { return o.r.Name }

func (o *outbound) run(ctx context.Context) error {
	cons, stream := o.setup(ctx)
	if cons == nil {
		return nil // ctx ended before the consumer could be set up
	}
	o.log.Info().Str("filter", o.r.Filter).Str("stream", stream).Str("durable", o.r.Durable).Str("topic", o.r.Topic).
		Str("dlt_headers", o.r.DLTHeaders).Str("dlt_topic", o.r.DLTTopic).Msg("outbound route running")
	bo := o.b.newBackoff()
	var down outage
	idle := false
	for ctx.Err() == nil {
		msgs, err := o.fetch(ctx, cons, idle)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			o.b.m.errors.WithLabelValues("out", o.r.Name, "fetch").Inc()
			down.fail(o.log, err, "JetStream fetch failed")
			bo.wait(ctx)
			continue
		}
		down.ok(o.log, "JetStream fetch works again")
		bo.reset()
		idle = len(msgs) == 0
		if idle {
			continue
		}
		if !o.inOrder(msgs) {
			if err := o.reset(ctx, stream); err != nil {
				o.b.m.errors.WithLabelValues("out", o.r.Name, "reset").Inc()
				o.log.Error().Err(err).Msg("cannot reset the consumer; the missing messages return after ack_wait, possibly behind newer ones")
				o.move(ctx, msgs)
			}
			continue
		}
		o.move(ctx, msgs)
		if o.fatal != nil {
			return o.fatal
		}
	}
	return nil
}

// failFast stops the route at it when errors_tolerance is none; true
// when it did.
func (o *outbound) failFast(it *outItem, why *unmappable) bool {
	if o.b.cfg.ErrorsTolerance != "none" {
		return false
	}
	o.fatal = fmt.Errorf("outbound %s: message %s cannot go to Kafka (%v) and errors_tolerance is none: stopping", o.r.Name, it.msg.Subject(), why)
	o.log.Error().Str("cause", why.cause).Str("error", why.msg).Str("subject", it.msg.Subject()).
		Msg("message cannot go to Kafka and errors_tolerance is none: stopping the bridge (the message stays unacked)")
	return true
}

// fetch waits up to a second for one message when idle, so a stop is seen
// within a second and a lone message does not wait for company. With a
// backlog it asks for a batch bounded by count and bytes (a batch of large
// interchanges must not fill memory) and waits at most backlogWait for the
// batch to fill.
func (o *outbound) fetch(ctx context.Context, cons js.Consumer, idle bool) ([]js.Msg, error) {
	var batch js.MessageBatch
	var err error
	if idle {
		fctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		batch, err = cons.Fetch(1, js.FetchContext(fctx))
	} else {
		// A single message larger than max bytes would never be delivered.
		maxBytes := max(o.b.cfg.BatchBytes, 2*o.b.maxPayload())
		batch, err = cons.Fetch(o.b.cfg.BatchSize, js.FetchMaxBytes(maxBytes), js.FetchMaxWait(backlogWait))
	}
	if err != nil {
		return nil, err
	}
	var msgs []js.Msg
	for m := range batch.Messages() {
		msgs = append(msgs, m)
	}
	if err := batch.Error(); err != nil && len(msgs) == 0 &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !errors.Is(err, nats.ErrTimeout) {
		return nil, err
	}
	return msgs, nil
}

// setup finds the stream and creates or updates the durable consumer,
// retrying until JetStream answers (the hub may still be provisioning).
func (o *outbound) setup(ctx context.Context) (js.Consumer, string) {
	bo := o.b.newBackoff()
	var down outage
	for {
		stream, err := o.r.Stream, error(nil)
		if stream == "" {
			stream, err = o.b.js.StreamNameBySubject(ctx, o.r.Filter)
			if err != nil {
				err = fmt.Errorf("find the stream of %s: %w", o.r.Filter, err)
			}
		}
		if err == nil {
			var cons js.Consumer
			cons, err = o.b.js.CreateOrUpdateConsumer(ctx, stream, js.ConsumerConfig{
				Durable:       o.r.Durable,
				Description:   "edihub bridge: " + o.r.Filter + " to Kafka " + o.r.Topic,
				FilterSubject: o.r.Filter,
				DeliverPolicy: js.DeliverAllPolicy,
				AckPolicy:     js.AckExplicitPolicy,
				AckWait:       o.r.AckWait,
				MaxAckPending: o.r.MaxAckPending,
				MaxDeliver:    -1, // JetStream's limit drops silently; the bridge never gives a message up
			})
			if err == nil {
				err = o.startOrder(ctx, cons, stream)
			}
			if err == nil {
				o.mu.Lock()
				o.cons = cons
				o.mu.Unlock()
				down.ok(o.log, "outbound route ready")
				return cons, stream
			}
			err = fmt.Errorf("consumer %s on %s: %w", o.r.Durable, stream, err)
		}
		o.b.m.errors.WithLabelValues("out", o.r.Name, "setup").Inc()
		down.fail(o.log, err, "outbound route not ready")
		if !bo.wait(ctx) {
			return nil, ""
		}
	}
}

// move produces msgs to Kafka and acks them. It returns when every message
// is produced or quarantined, or when the flush deadline after ctx passed.
func (o *outbound) move(ctx context.Context, msgs []js.Msg) {
	start := time.Now()
	fctx, cancel := flushContext(ctx, o.b.cfg.ShutdownTimeout)
	defer cancel()
	items := make([]*outItem, len(msgs))
	for i, m := range msgs {
		items[i] = o.mapMsg(m)
	}
	for i, it := range items {
		if it.poison != nil && o.failFast(it, it.poison) {
			o.ack(items[i:]) // none done: all nak'ed, in order
			items = items[:i]
			break
		}
	}
	stopKeepAlive := o.keepAlive(items)
	bo := o.b.newBackoff()
	o.down = outage{}
	for fctx.Err() == nil && o.fatal == nil {
		var todo []*outItem
		for _, it := range items {
			if !it.done.Load() {
				todo = append(todo, it)
			}
		}
		if len(todo) == 0 {
			break
		}
		if o.produce(fctx, todo) == 0 {
			continue // only quarantines happened: publish them now
		}
		bo.wait(fctx)
	}
	stopKeepAlive()
	if allDone(items) {
		o.down.ok(o.log, "Kafka produce works again")
	}
	o.ack(items)
	o.b.m.batch.WithLabelValues("out", o.r.Name).Observe(time.Since(start).Seconds())
}

func allDone(items []*outItem) bool {
	for _, it := range items {
		if !it.done.Load() {
			return false
		}
	}
	return true
}

// produce sends the records of items (or publishes the poison copy of those
// that cannot be mapped) and waits; it returns how many failed transiently.
// Each attempt is bounded by ProduceTimeout through its context: kgo fails
// the partition's buffered records together when that passes (never one
// alone, so order holds), except a request already on the wire, whose
// answer it must wait for to keep idempotent sequence numbers right.
func (o *outbound) produce(ctx context.Context, items []*outItem) (failed int) {
	pctx, cancel := context.WithTimeout(ctx, o.b.cfg.ProduceTimeout)
	defer cancel()
	results := make([]chan error, len(items))
	for i, it := range items {
		if it.poison != nil || it.skip {
			continue
		}
		value := it.msg.Data()
		if it.claim != nil {
			if it.value == nil {
				if err := o.fetchClaim(pctx, it); err != nil {
					failed++
					o.b.m.errors.WithLabelValues("out", o.r.Name, "fetch").Inc()
					o.down.fail(o.log.With().Str("subject", it.msg.Subject()).Logger(), err, "cannot fetch a payload stored aside")
					continue
				}
				if it.poison != nil {
					continue
				}
			}
			value = it.value
		}
		// A fresh record per attempt: kgo owns a record until its promise.
		rec := &kgo.Record{Topic: it.topic, Key: it.key, Value: value, Headers: it.hs}
		if it.partition >= 0 {
			rec.Partition = it.partition
			rec.Context = context.WithValue(context.Background(), manualPartition{}, true)
		}
		res := make(chan error, 1)
		results[i] = res
		o.prod.Produce(pctx, rec, func(_ *kgo.Record, err error) { res <- err })
	}
	stalled := false
	for i, it := range items {
		if res := results[i]; res != nil {
			select {
			case it.err = <-res:
			case <-ctx.Done():
				// Stopping while the broker holds an answer back: leave the
				// rest unacked (nak'ed), the next run produces them again.
				it.err = ctx.Err()
			case <-pctx.Done():
				// A request on the wire waits for the broker's answer (kgo
				// keeps idempotent sequence numbers right that way): say so
				// once per attempt, then keep waiting.
				if !stalled && ctx.Err() == nil {
					stalled = true
					o.b.m.errors.WithLabelValues("out", o.r.Name, "produce").Inc()
					o.down.fail(o.log.With().Str("topic", it.topic).Logger(), pctx.Err(), "Kafka produce not acknowledged within produce_timeout")
				}
				select {
				case it.err = <-res:
				case <-ctx.Done():
					it.err = ctx.Err()
				}
			}
			if it.err == nil {
				it.done.Store(true)
				continue
			}
			if why := permanentProduceError(it.err); why != nil {
				if o.failFast(it, why) {
					failed++
					continue
				}
				it.poison = why
				o.log.Warn().Err(it.err).Str("subject", it.msg.Subject()).Str("topic", it.topic).Msg("Kafka refused the record; quarantining it")
			} else {
				failed++
				if ctx.Err() == nil {
					o.b.m.errors.WithLabelValues("out", o.r.Name, "produce").Inc()
					o.down.fail(o.log.With().Str("subject", it.msg.Subject()).Str("topic", it.topic).Logger(), it.err, "Kafka produce failed")
				}
				continue
			}
		}
		if it.poison == nil || ctx.Err() != nil {
			continue
		}
		if err := o.quarantine(ctx, it); err != nil {
			failed++
			o.b.m.errors.WithLabelValues("out", o.r.Name, "publish").Inc()
			o.log.Error().Err(err).Str("subject", it.msg.Subject()).Msg("cannot quarantine; retrying with backoff")
			continue
		}
		it.done.Store(true)
	}
	return failed
}

// permanentProduceError: Kafka will never take this record as it is.
func permanentProduceError(err error) *unmappable {
	switch {
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		return unmap(causeOversize, "Kafka refused the record as too large: %v", err)
	case errors.Is(err, kerr.InvalidTopicException):
		return unmap(causeBadTopic, "%v", err)
	case errors.Is(err, kerr.InvalidRecord), errors.Is(err, kerr.CorruptMessage):
		return unmap(causeRejected, "Kafka refused the record: %v", err)
	}
	return nil
}

// quarantine publishes it's poison copy and waits for JetStream's ack.
func (o *outbound) quarantine(ctx context.Context, it *outItem) error {
	stream, seq := "", uint64(0)
	if it.meta != nil {
		stream, seq = it.meta.Stream, it.meta.Sequence.Stream
	}
	src := &nats.Msg{Subject: it.msg.Subject(), Header: it.msg.Headers(), Data: it.msg.Data()}
	pm := outboundPoison(o.b.cfg.PoisonSubject, o.r.Name, src, stream, seq, it.topic, it.poison, o.b.maxPayload(), time.Now())
	pctx, cancel := context.WithTimeout(ctx, o.b.cfg.PublishTimeout)
	defer cancel()
	if _, err := o.b.js.PublishMsg(pctx, pm, js.WithMsgID(outboundPoisonID(stream, seq))); err != nil {
		return fmt.Errorf("publish poison copy to %s: %w", pm.Subject, err)
	}
	o.b.m.quarantined.WithLabelValues("out", o.r.Name, it.poison.cause).Inc()
	o.log.Warn().Str("cause", it.poison.cause).Str("error", it.poison.msg).Str("subject", it.msg.Subject()).
		Str("stream", stream).Uint64("seq", seq).Str("poison_subject", pm.Subject).Msg("message quarantined")
	return nil
}

// keepAlive tells JetStream every AckWait/3 that held messages are still
// being worked on, so a long broker outage does not make the server
// redeliver them behind the bridge's back (out of order, and twice).
func (o *outbound) keepAlive(items []*outItem) (stop func()) {
	return jetstream.KeepAlive(heldItems(items), max(o.r.AckWait/3, 100*time.Millisecond))
}

// heldItems sends progress for the items not yet done.
type heldItems []*outItem

func (h heldItems) InProgress() error {
	for _, it := range h {
		if !it.done.Load() {
			_ = it.msg.InProgress()
		}
	}
	return nil
}

// ack acks what was moved, in stream order, and naks the rest (only left
// when the bridge stops mid-outage) so they are redelivered first.
func (o *outbound) ack(items []*outItem) {
	var moved int
	for _, it := range items {
		if !it.done.Load() {
			if err := it.msg.Nak(); err != nil {
				o.log.Warn().Err(err).Msg("nak on shutdown failed; the message returns after ack_wait")
			}
			continue
		}
		if err := it.msg.Ack(); err != nil {
			// Kafka has it; JetStream redelivers after AckWait and Kafka
			// gets a duplicate: at least once, never lost.
			o.b.m.errors.WithLabelValues("out", o.r.Name, "ack").Inc()
			o.log.Warn().Err(err).Str("subject", it.msg.Subject()).Msg("ack failed; the message will be produced again")
			continue
		}
		if it.skip {
			o.b.m.skipped.WithLabelValues(o.r.Name).Inc()
			o.log.Debug().Str("subject", it.msg.Subject()).Str("written_by", it.msg.Headers().Get(wire.HdrBridgeCopy)).
				Msg("a copy the bridge wrote: not produced (no feedback loop)")
			continue
		}
		moved++
		o.b.m.bytes.WithLabelValues("out", o.r.Name).Add(float64(len(it.msg.Data())))
	}
	o.b.m.records.WithLabelValues("out", o.r.Name).Add(float64(moved))
}

// mapMsg builds the Kafka record of m, or marks it for quarantine.
func (o *outbound) mapMsg(m js.Msg) *outItem {
	it := &outItem{msg: m, partition: -1}
	meta, err := m.Metadata()
	if err != nil {
		// Only a message that did not come from a consumer lacks metadata.
		it.poison = unmap(causeRejected, "no JetStream metadata: %v", err)
		return it
	}
	it.meta = meta
	h := m.Headers()
	if bridgeMade(h) {
		it.skip = true
		it.done.Store(true)
		return it
	}
	it.topic = strings.ReplaceAll(o.r.Topic, "{{subject}}", m.Subject())
	if !kafkaTopicRE.MatchString(it.topic) {
		it.poison = unmap(causeBadTopic, "topic %q from template %q is not a legal Kafka topic name", it.topic, o.r.Topic)
		return it
	}
	h = hubOwnedHeaders(o.b.cfg.Keys, messagePartner(m.Subject(), h), h)
	key, hs, err := natsToKafka(h, o.b.carry)
	if err != nil {
		it.poison = unmap(causeBadHeader, "%v", err)
		return it
	}
	if key == nil {
		key = o.partitionKey(h, m.Subject())
	}
	hs = append(hs, dltHeaders(o.r.DLTHeaders, h, dltSource{subject: m.Subject(), streamSeq: meta.Sequence.Stream, stored: meta.Timestamp})...)
	if o.r.DLTTopic == "spring" {
		if orig := originOf(h); orig.ok {
			it.topic, it.partition = orig.topic+".DLT", orig.partition
		}
	}
	it.key, it.hs = key, hs
	if c, ok, err := hubClaim(h); err != nil {
		it.poison = unmap(causeBadHeader, "%v", err)
	} else if ok {
		o.mapClaim(it, c, h)
	}
	return it
}

// partitionKey keys a record without a signed x-kafka-key so that one
// partner's records share a Kafka partition: the route's key token of the
// subject, else the partner (messagePartner). No key at all leaves
// partitioning to Kafka.
func (o *outbound) partitionKey(h nats.Header, subject string) []byte {
	if o.r.KeyToken > 0 {
		if toks := strings.Split(subject, "."); len(toks) >= o.r.KeyToken {
			return []byte(toks[o.r.KeyToken-1])
		}
	}
	if p := messagePartner(subject, h); p != "" {
		return []byte(p)
	}
	return nil
}

// lag is what the consumer has not yet delivered plus what awaits an ack.
func (o *outbound) lag(ctx context.Context) (int64, bool) {
	o.mu.Lock()
	cons := o.cons
	o.mu.Unlock()
	if cons == nil {
		return 0, false
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return 0, false
	}
	return int64(info.NumPending) + int64(info.NumAckPending), true
}

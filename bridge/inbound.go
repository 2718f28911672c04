package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// inbound moves one Kafka topic to JetStream.
//
// Offsets are committed with kgo's AutoCommitMarks: a record is marked only
// once JetStream acked it (or its poison copy), and only as part of an
// unbroken run from the start of its partition's batch, so a commit never
// covers a record that is not stored. BlockRebalanceOnPoll keeps a
// rebalance from moving a partition while its batch is in flight.
type inbound struct {
	b   *Bridge
	r   InRoute
	src partnerSource
	log zerolog.Logger

	down outage // publish failures of the batch in flight
	id   topicIdentity

	prod  *kgo.Client // the bridge's producer, for dlt_topic; nil when none
	fatal error       // errors_tolerance none: the unmappable record that stops the route

	mu  sync.Mutex
	adm *kadm.Client // lag queries; nil while the consumer is not running

	rereadMu sync.Mutex
	reread   map[int32]bool // partitions whose re-read was logged this run
}

// inItem is one record on its way to JetStream.
type inItem struct {
	rec    *kgo.Record
	msg    *nats.Msg
	id     string      // Nats-Msg-Id
	poison *unmappable // non-nil when msg is the record's poison copy
	err    error       // last publish error
	done   bool        // JetStream acked msg
	dltOK  bool        // written to the Kafka dead-letter topic, or none wanted
}

func (in *inbound) name() string { return in.r.Name }

func (in *inbound) opts() []kgo.Opt {
	c := in.b.cfg
	opts := in.b.clientOpts("consumer")
	if id := c.instanceID(in.r.Name); id != "" {
		opts = append(opts, kgo.InstanceID(id))
	}
	return append(opts,
		kgo.SessionTimeout(c.SessionTimeout),
		kgo.HeartbeatInterval(c.HeartbeatInterval),
		kgo.RebalanceTimeout(c.RebalanceTimeout),
		kgo.ConsumerGroup(in.r.Group),
		kgo.ConsumeTopics(in.r.Topic),
		// A new group starts at the beginning: records written before the
		// bridge first ran are partners' interchanges too.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.BlockRebalanceOnPoll(),
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(time.Second),
		kgo.FetchMaxPartitionBytes(max(in.b.cfg.MaxRecordBytes, 1<<20)),
	)
}

func (in *inbound) run(ctx context.Context) error {
	cl, err := kgo.NewClient(in.opts()...)
	if err != nil {
		return fmt.Errorf("inbound %s: kafka consumer: %w", in.r.Name, err)
	}
	in.setAdm(kadm.NewClient(cl))
	defer func() {
		in.setAdm(nil)
		// Commit, leave the group and close, all by the shutdown deadline:
		// a dead or hanging broker cannot hold the stop.
		sctx := in.b.stopCtx
		if err := cl.CommitMarkedOffsets(sctx); err != nil {
			in.log.Warn().Err(err).Msg("commit on shutdown failed; the next start re-reads and JetStream deduplicates")
		}
		cl.AllowRebalance()
		if err := cl.LeaveGroupContext(sctx); err != nil && sctx.Err() == nil {
			in.log.Warn().Err(err).Msg("leave group on shutdown failed; the group rebalances after session_timeout")
		}
		// Close waits for the group to be left, which a broker that
		// swallows requests can hold up: past the deadline it finishes in
		// the background.
		closed := make(chan struct{})
		go func() { cl.Close(); close(closed) }()
		select {
		case <-closed:
		case <-sctx.Done():
			in.log.Warn().Msg("Kafka consumer did not close by shutdown_timeout; leaving it to finish in the background")
		}
	}()
	in.log.Info().Str("topic", in.r.Topic).Str("group", in.r.Group).Str("subject", in.r.Subject).Msg("inbound route running")

	bo := in.b.newBackoff()
	var down outage
	for ctx.Err() == nil {
		fetches := cl.PollRecords(ctx, in.b.cfg.BatchSize)
		if fetches.IsClientClosed() {
			break
		}
		failed, recreated := false, false
		fetches.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return
			}
			if errors.Is(err, kerr.UnknownTopicID) {
				recreated = true
			}
			failed = true
			in.b.m.errors.WithLabelValues("in", in.r.Name, "fetch").Inc()
			down.fail(in.log.With().Str("topic", topic).Int32("partition", p).Logger(), err, "kafka fetch failed")
		})
		if recs := fetches.Records(); len(recs) > 0 {
			down.ok(in.log, "kafka fetch works again")
			in.move(ctx, cl, recs)
			bo.reset()
			if in.fatal != nil {
				cl.AllowRebalance()
				return in.fatal
			}
		} else if failed {
			cl.AllowRebalance()
			if recreated {
				in.readopt(cl)
			}
			bo.wait(ctx)
			continue
		}
		cl.AllowRebalance()
	}
	return nil
}

// readopt follows a topic that was deleted and re-created: the client
// keeps the old topic id and fails with UNKNOWN_TOPIC_ID until the topic
// is purged and consumed again. The new topic's records get new dedupe ids
// (see topicIdentity), so none is dropped as a duplicate of an old one.
func (in *inbound) readopt(cl *kgo.Client) {
	in.log.Warn().Str("topic", in.r.Topic).Msg("the topic was deleted and re-created: consuming the new one")
	cl.PurgeTopicsFromConsuming(in.r.Topic)
	cl.AddConsumeTopics(in.r.Topic)
}

// move publishes recs and marks what JetStream acked. Publishes are async
// and pipelined in record order on one connection, so the stream stores a
// partition's records in Kafka order. A publish that failed transiently is
// retried with backoff until it lands or the flush deadline after ctx
// passes; one JetStream refuses outright is quarantined.
func (in *inbound) move(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) {
	start := time.Now()
	fctx, cancel := flushContext(ctx, in.b.cfg.ShutdownTimeout)
	defer cancel()
	bo := in.b.newBackoff()
	for {
		changed, err := in.id.refresh(fctx, in.getAdm(), in.r.Topic, recs)
		if err == nil {
			if changed {
				in.log.Warn().Str("topic", in.r.Topic).Str("identity", in.id.prefix).
					Msg("the topic was re-created or the cluster changed: new dedupe ids from here on")
			}
			break
		}
		in.b.m.errors.WithLabelValues("in", in.r.Name, "metadata").Inc()
		in.log.Warn().Err(err).Msg("cannot learn the topic id for the dedupe ids; retrying")
		if !bo.wait(fctx) {
			in.log.Warn().Int("records", len(recs)).Msg("stopping with records not yet stored; they stay uncommitted and are read again on the next start")
			return
		}
	}
	bo.reset()
	mp := in.b.maxPayload()
	items := make([]*inItem, len(recs))
	for i, rec := range recs {
		items[i] = in.mapRecord(rec, mp)
		if items[i].poison != nil && in.b.cfg.ErrorsTolerance == "none" {
			// Fail fast: store what came before it, stop at it. It stays
			// uncommitted and stops the route again after a restart.
			in.fatal = fmt.Errorf("inbound %s: record %s/%d/%d cannot be mapped (%v) and errors_tolerance is none: stopping",
				in.r.Name, rec.Topic, rec.Partition, rec.Offset, items[i].poison)
			in.log.Error().Str("cause", items[i].poison.cause).Str("error", items[i].poison.msg).Str("topic", rec.Topic).
				Int32("partition", rec.Partition).Int64("offset", rec.Offset).Msg("record cannot be mapped and errors_tolerance is none: stopping the bridge")
			items = items[:i]
			break
		}
	}
	in.down = outage{}
	for {
		var todo []*inItem
		for _, it := range items {
			if !it.done || !it.dltOK {
				todo = append(todo, it)
			}
		}
		if len(todo) == 0 {
			break
		}
		if fctx.Err() != nil {
			in.log.Warn().Int("records", len(todo)).Msg("stopping with records not yet stored; they stay uncommitted and are read again on the next start")
			break
		}
		if in.publish(fctx, notDone(todo))+in.produceDLT(fctx, todo) == 0 {
			continue
		}
		if !bo.wait(fctx) {
			continue
		}
	}
	if !slices.ContainsFunc(items, func(it *inItem) bool { return !it.done || !it.dltOK }) {
		in.down.ok(in.log, "JetStream publish works again")
	}
	in.mark(cl, items)
	in.b.m.batch.WithLabelValues("in", in.r.Name).Observe(time.Since(start).Seconds())
}

// publish sends items and waits for their acks; it returns how many failed
// transiently.
func (in *inbound) publish(ctx context.Context, items []*inItem) (failed int) {
	futures := make([]js.PubAckFuture, len(items))
	for i, it := range items {
		f, err := in.b.js.PublishMsgAsync(it.msg, js.WithMsgID(it.id))
		if err != nil {
			it.err = err
			continue
		}
		futures[i] = f
	}
	deadline := time.NewTimer(in.b.cfg.PublishTimeout)
	defer deadline.Stop()
	expired := false
	for i, f := range futures {
		it := items[i]
		if f == nil {
			failed += in.failed(it, it.err)
			continue
		}
		var err error
		var ack *js.PubAck
		if expired {
			select {
			case ack = <-f.Ok():
			case err = <-f.Err():
			default:
				err = errors.New("no JetStream ack within publish_timeout")
			}
		} else {
			select {
			case ack = <-f.Ok():
			case err = <-f.Err():
			case <-ctx.Done():
				err, expired = ctx.Err(), true
			case <-deadline.C:
				err, expired = errors.New("no JetStream ack within publish_timeout"), true
			}
		}
		if err != nil {
			failed += in.failed(it, err)
			continue
		}
		it.done = true
		if ack != nil && ack.Duplicate {
			in.duplicate(it, ack)
		}
	}
	return failed
}

// duplicate counts a record the server already had under its dedupe id: a
// re-read after a crash or a stop before the commit, never a new record
// (the id names cluster, topic id, partition and offset). It is logged
// once per partition per run, at the first such record: a kill -9 re-reads
// everything since the last commit, and a line per record (6 856 for three
// kills, issue 25) buried the log; edihub_bridge_duplicates_total counts
// them all.
func (in *inbound) duplicate(it *inItem, ack *js.PubAck) {
	in.b.m.duplicates.WithLabelValues(in.r.Name).Inc()
	in.rereadMu.Lock()
	first := !in.reread[it.rec.Partition]
	if in.reread == nil {
		in.reread = map[int32]bool{}
	}
	in.reread[it.rec.Partition] = true
	in.rereadMu.Unlock()
	if !first {
		return
	}
	in.log.Warn().Str("topic", it.rec.Topic).Int32("partition", it.rec.Partition).Int64("offset", it.rec.Offset).
		Str("msg_id", it.id).Str("stream", ack.Stream).Uint64("seq", ack.Sequence).
		Msg("re-reading records JetStream already has (after a crash or a stop before the commit): not stored again; logged once per partition, counted in edihub_bridge_duplicates_total")
}

// failed records a failed publish and returns 1 when it is transient. A
// refusal of the message itself turns the item into its poison copy, which
// the caller's loop publishes at once.
func (in *inbound) failed(it *inItem, err error) int {
	it.err = err
	if it.poison == nil && permanentPublishError(err) {
		in.log.Warn().Err(err).Str("topic", it.rec.Topic).Int32("partition", it.rec.Partition).Int64("offset", it.rec.Offset).
			Msg("JetStream refused the record; quarantining it")
		*it = *in.poisonItem(it.rec, unmap(causeRejected, "JetStream refused %s: %v", it.msg.Subject, err), in.b.maxPayload())
		return 0
	}
	in.b.m.errors.WithLabelValues("in", in.r.Name, "publish").Inc()
	in.down.fail(in.log.With().Str("subject", it.msg.Subject).Int64("offset", it.rec.Offset).Logger(), err, "JetStream publish failed")
	return 1
}

// permanentPublishError: JetStream stored nothing and never will for this
// message, so retrying would loop.
func permanentPublishError(err error) bool {
	var apiErr *js.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == js.JSErrCodeStreamMessageExceedsMaximum
	}
	return errors.Is(err, nats.ErrMaxPayload)
}

// mark marks, per partition, the records up to the first one not stored.
func (in *inbound) mark(cl *kgo.Client, items []*inItem) {
	type tp struct {
		t string
		p int32
	}
	blocked := map[tp]bool{}
	var last []*kgo.Record
	lastIdx := map[tp]int{}
	var moved, quarantined int
	for _, it := range items {
		k := tp{it.rec.Topic, it.rec.Partition}
		if blocked[k] {
			continue
		}
		if !it.done || !it.dltOK {
			blocked[k] = true
			continue
		}
		if i, ok := lastIdx[k]; ok {
			last[i] = it.rec
		} else {
			lastIdx[k] = len(last)
			last = append(last, it.rec)
		}
		moved++
		in.b.m.bytes.WithLabelValues("in", in.r.Name).Add(float64(len(it.rec.Value)))
		if it.poison != nil {
			quarantined++
			in.b.m.quarantined.WithLabelValues("in", in.r.Name, it.poison.cause).Inc()
			in.log.Warn().Str("cause", it.poison.cause).Str("error", it.poison.msg).Str("topic", it.rec.Topic).
				Int32("partition", it.rec.Partition).Int64("offset", it.rec.Offset).Str("poison_subject", it.msg.Subject).
				Msg("record quarantined")
		}
	}
	cl.MarkCommitRecords(last...)
	in.b.m.records.WithLabelValues("in", in.r.Name).Add(float64(moved))
}

// mapRecord builds the JetStream message for rec, or its poison copy when
// rec cannot be mapped.
func (in *inbound) mapRecord(rec *kgo.Record, maxPayload int) *inItem {
	partner, why := in.partner(rec)
	if why == nil {
		h := nats.Header{}
		id := in.id.recordID(rec, "")
		if err := kafkaToNATS(rec, h, in.b.carry); err != nil {
			why = unmap(causeBadHeader, "%v", err)
		} else if size := len(rec.Value) + headerBytes(h) + len(id) + len("Nats-Msg-Id: \r\n"); size > maxPayload {
			why = unmap(causeOversize, "record of %d bytes with headers exceeds NATS max payload of %d bytes", size, maxPayload)
		} else {
			subject := strings.ReplaceAll(in.r.Subject, "{{partner}}", partner)
			h.Set(wire.HdrBridgeCopy, in.r.Name)
			h.Set(wire.HdrKafkaGroup, in.r.Group)
			wire.SignKafkaOrigin(in.b.cfg.Keys, partner, h)
			return &inItem{rec: rec, msg: &nats.Msg{Subject: subject, Header: h, Data: rec.Value}, id: id, dltOK: true}
		}
	}
	return in.poisonItem(rec, why, maxPayload)
}

func (in *inbound) poisonItem(rec *kgo.Record, why *unmappable, maxPayload int) *inItem {
	msg := inboundPoison(in.b.cfg.PoisonSubject, in.r.Name, rec, why, maxPayload, time.Now())
	return &inItem{rec: rec, msg: msg, id: in.id.recordID(rec, ":poison"), poison: why, dltOK: in.r.DLTTopic == ""}
}

// partner returns the partner of rec: the key or the configured header.
// It must be one subject token, or the record would land on a subject the
// INGEST transform does not expect.
func (in *inbound) partner(rec *kgo.Record) (string, *unmappable) {
	var p []byte
	where := "record key"
	if in.src.header == "" {
		p = rec.Key
	} else {
		where = "header " + in.src.header
		for _, h := range rec.Headers {
			if strings.EqualFold(h.Key, in.src.header) {
				p = h.Value
				break
			}
		}
	}
	if len(p) == 0 {
		return "", unmap(causeNoPartner, "no partner: %s is empty", where)
	}
	if !validPartner(p) {
		return "", unmap(causeBadPartner, "partner %q from %s is not one NATS subject token", p, where)
	}
	return string(p), nil
}

func validPartner(p []byte) bool {
	if len(p) > 128 {
		return false
	}
	for _, c := range p {
		if c <= ' ' || c >= 0x7f || c == '.' || c == '*' || c == '>' {
			return false
		}
	}
	return true
}

func (in *inbound) getAdm() *kadm.Client {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.adm
}

func (in *inbound) setAdm(a *kadm.Client) {
	in.mu.Lock()
	in.adm = a
	in.mu.Unlock()
}

// lag is the group's committed lag on the topic: records in Kafka that
// are not yet safely in JetStream.
func (in *inbound) lag(ctx context.Context) (int64, bool) {
	in.mu.Lock()
	adm := in.adm
	in.mu.Unlock()
	if adm == nil {
		return 0, false
	}
	lags, err := adm.Lag(ctx, in.r.Group)
	if err != nil {
		return 0, false
	}
	l, ok := lags[in.r.Group]
	if !ok || l.Error() != nil {
		return 0, false
	}
	for p, ml := range l.Lag[in.r.Topic] {
		in.b.m.partLag.WithLabelValues(in.r.Name, in.r.Group, in.r.Topic, strconv.Itoa(int(p))).Set(float64(max(ml.Lag, 0)))
	}
	return l.Lag.TotalByTopic()[in.r.Topic].Lag, true
}

// maxPayload is the NATS server's limit for one message, as the
// connection learned it; NATS's default when not yet known.
func (b *Bridge) maxPayload() int {
	if mp := b.nc.MaxPayload(); mp > 0 {
		return int(mp)
	}
	return 1 << 20
}

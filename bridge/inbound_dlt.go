package bridge

import (
	"context"
	"strconv"
	"strings"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"
)

func notDone(items []*inItem) []*inItem {
	var out []*inItem
	for _, it := range items {
		if !it.done {
			out = append(out, it)
		}
	}
	return out
}

// produceDLT writes the records of items that could not be mapped to the
// route's Kafka dead-letter topic, as they were (key, value, headers) plus
// the dead-letter headers, and waits; it returns how many failed. The
// record is committed only once both its poison copy and this are stored.
func (in *inbound) produceDLT(ctx context.Context, items []*inItem) (failed int) {
	if in.prod == nil {
		return 0
	}
	pctx, cancel := context.WithTimeout(ctx, in.b.cfg.ProduceTimeout)
	defer cancel()
	var recs []*kgo.Record
	var its []*inItem
	for _, it := range items {
		if it.dltOK || it.poison == nil {
			continue
		}
		recs = append(recs, in.dltRecord(it))
		its = append(its, it)
	}
	if len(recs) == 0 {
		return 0
	}
	res := in.prod.ProduceSync(pctx, recs...)
	for i, r := range res {
		if r.Err != nil {
			failed++
			in.b.m.errors.WithLabelValues("in", in.r.Name, "dlt").Inc()
			in.down.fail(in.log.With().Str("dlt_topic", recs[i].Topic).Logger(), r.Err, "Kafka dead-letter produce failed")
			continue
		}
		its[i].dltOK = true
	}
	return failed
}

// dltRecord is the dead-letter record of an unmappable inbound record.
func (in *inbound) dltRecord(it *inItem) *kgo.Record {
	rec := it.rec
	h := nats.Header{}
	h.Set(wire.HdrKafkaTopic, rec.Topic)
	h.Set(wire.HdrKafkaPartition, strconv.FormatInt(int64(rec.Partition), 10))
	h.Set(wire.HdrKafkaOffset, strconv.FormatInt(rec.Offset, 10))
	h.Set(wire.HdrKafkaTimestamp, strconv.FormatInt(rec.Timestamp.UnixMilli(), 10))
	h.Set(wire.HdrKafkaGroup, in.r.Group)
	h.Set(wire.HdrErrorClass, "bridge")
	h.Set(wire.HdrErrorCause, it.poison.cause)
	h.Set(wire.HdrErrorMsg, escape.Header(it.poison.msg))
	h.Set(wire.HdrStage, "bridge")
	hs := append([]kgo.RecordHeader(nil), rec.Headers...)
	hs = append(hs, dltHeaders(in.r.DLTHeaders, h, dltSource{subject: in.b.cfg.PoisonSubject})...)
	return &kgo.Record{
		Topic: strings.ReplaceAll(in.r.DLTTopic, "{{topic}}", rec.Topic),
		Key:   rec.Key, Value: rec.Value, Headers: hs,
	}
}

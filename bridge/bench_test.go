package bridge

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The benchmarks move b.N records of benchPayload bytes against kfake and
// a real embedded NATS, and report records/s. The raw franz-go baselines
// show what kfake itself allows on this machine, so the bridge's figures
// read as a share of it. Run:
//
//	go test -run '^$' -bench . -benchtime 20000x ./bridge/
var benchPayload = bytes.Repeat([]byte("UNH+1+ORDERS:D:96A:UN'"), 46) // ~1 KiB

func benchRecords(n int, topic string) []*kgo.Record {
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Key: []byte(partners[i%3]), Value: benchPayload}
	}
	return recs
}

// produceAll produces recs asynchronously and waits for every ack.
func produceAll(b *testing.B, cl *kgo.Client, recs []*kgo.Record) {
	for _, r := range recs {
		cl.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := cl.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

func reportRate(b *testing.B, start time.Time) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}

// BenchmarkRawProduce: franz-go's idempotent producer straight to kfake.
func BenchmarkRawProduce(b *testing.B) {
	_, brokers := startKafka(b, "raw")
	cl := kafkaClient(b, brokers, kgo.ProducerLinger(time.Millisecond))
	recs := benchRecords(b.N, "raw")
	b.ResetTimer()
	start := time.Now()
	produceAll(b, cl, recs)
	reportRate(b, start)
}

// BenchmarkRawConsume: a group consumer with manual commits reading what
// was produced beforehand.
func BenchmarkRawConsume(b *testing.B) {
	_, brokers := startKafka(b, "raw")
	produceAll(b, kafkaClient(b, brokers), benchRecords(b.N, "raw"))
	cl := kafkaClient(b, brokers, kgo.ConsumerGroup("raw-bench"), kgo.ConsumeTopics("raw"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; {
		f := cl.PollRecords(context.Background(), 256)
		n += f.NumRecords()
		if err := cl.CommitUncommittedOffsets(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, start)
}

// BenchmarkInbound: Kafka → bridge → INGEST, offsets committed.
func BenchmarkInbound(b *testing.B) {
	h := startNATS(b, 0)
	_, brokers := startKafka(b, "partners.in")
	produceAll(b, kafkaClient(b, brokers), benchRecords(b.N, "partners.in"))
	cfg := testConfig(brokers)
	cfg.BatchSize = benchBatch()
	cfg.Inbound = []InRoute{{Topic: "partners.in"}}
	b.ResetTimer()
	start := time.Now()
	r := startBridge(b, h, cfg, nil)
	for h.count(b, "INGEST") < b.N {
		time.Sleep(2 * time.Millisecond)
	}
	reportRate(b, start)
	b.StopTimer()
	r.stop(b)
}

// BenchmarkOutbound: PARSED → bridge → Kafka, NATS messages acked.
func BenchmarkOutbound(b *testing.B) {
	h := startNATS(b, 0)
	_, brokers := startKafka(b, "edi.parsed")
	for i := 0; i < b.N; i++ {
		if _, err := h.js.PublishMsgAsync(&nats.Msg{Subject: "edi.parsed." + partners[i%3] + ".ORDERS", Data: benchPayload}); err != nil {
			b.Fatal(err)
		}
	}
	<-h.js.PublishAsyncComplete()
	cfg := testConfig(brokers)
	cfg.BatchSize = benchBatch()
	cfg.Outbound = []OutRoute{{Filter: "edi.parsed.>", Topic: "edi.parsed"}}
	adm := kadm.NewClient(kafkaClient(b, brokers))
	produced := func() int {
		offs, err := adm.ListEndOffsets(context.Background(), "edi.parsed")
		if err != nil {
			return 0
		}
		n := 0
		offs.Each(func(o kadm.ListedOffset) { n += int(o.Offset) })
		return n
	}
	b.ResetTimer()
	start := time.Now()
	r := startBridge(b, h, cfg, nil)
	for produced() < b.N {
		time.Sleep(2 * time.Millisecond)
	}
	reportRate(b, start)
	b.StopTimer()
	r.stop(b)
	cons, err := h.js.Consumer(context.Background(), "PARSED", "bridge-out-edi-parsed-all")
	if err != nil {
		b.Fatal(err)
	}
	if info, err := cons.Info(context.Background()); err != nil || info.NumAckPending != 0 || info.NumPending != 0 {
		b.Fatalf("after the run: %+v %v", info, err)
	}
}

// BenchmarkRawJetStreamPublish: async publishes with dedupe ids to INGEST,
// the NATS half of the inbound path without Kafka.
func BenchmarkRawJetStreamPublish(b *testing.B) {
	h := startNATS(b, 0)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		m := &nats.Msg{Subject: "edi.ingest." + partners[i%3], Data: benchPayload}
		if _, err := h.js.PublishMsgAsync(m, js.WithMsgID("raw:"+strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
	<-h.js.PublishAsyncComplete()
	reportRate(b, start)
}

// benchBatch is the bridge's batch_size for the benchmarks: the default
// (256) unless EDIHUB_BENCH_BATCH says otherwise.
func benchBatch() int {
	n, _ := strconv.Atoi(os.Getenv("EDIHUB_BENCH_BATCH"))
	return n
}

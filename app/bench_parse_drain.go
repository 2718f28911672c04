package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edihub/edihub/hub"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/wire"
)

// The drains of `edihub bench --stage parse`: filling INGEST, the plain
// consume-publish-ack pipeline, and the hub (with or without the ledger,
// or emitting the plain side's outputs), each timed per partition.

// fillParse empties INGEST and PARSED and publishes c.Messages fresh
// interchanges over b.partners partners; the control references are
// unique per fill, so the ledger never sees a repeat.
func (b *bench) fillParse(ctx context.Context, c parseClass, fill int) error {
	for _, s := range []string{wire.DefaultIngestStream, wire.DefaultParsedStream} {
		st, err := b.js.Stream(ctx, s)
		if err != nil {
			return err
		}
		if err := st.Purge(ctx); err != nil {
			return err
		}
	}
	tmpl := benchInvoice("R000000000", c.UNH, c.Lines)
	// 64 at a time: bound what is in flight for the large classes.
	return publishPaced(b.js, c.Messages, 64, func(i int) *nats.Msg {
		// Same length every time: only the digits of the reference change.
		data := []byte(strings.ReplaceAll(string(tmpl), "R000000000", fmt.Sprintf("R%03d%06d", fill%1000, i)))
		return &nats.Msg{Subject: wire.IngestSubject("P" + strconv.Itoa(i%b.partners)), Data: data}
	})
}

// partTimes records per partition the time of its first and last message
// and the count, at the same point of every message's cycle, so that
// (count-1)/(last-first) is the partition's cycle rate.
type partTimes struct {
	mu    sync.Mutex
	first []time.Time
	last  []time.Time
	n     []int
}

func newPartTimes(parts int) *partTimes {
	return &partTimes{first: make([]time.Time, parts), last: make([]time.Time, parts), n: make([]int, parts)}
}

func (p *partTimes) tick(part int) {
	now := time.Now()
	p.mu.Lock()
	if p.n[part] == 0 {
		p.first[part] = now
	}
	p.last[part] = now
	p.n[part]++
	p.mu.Unlock()
}

// startSpread is the time from the first partition's first message to
// the last one's: how far from running side by side the partitions
// started (a partition that starts late stretches the whole drain).
func (p *partTimes) startSpread() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lo, hi time.Time
	for i := range p.n {
		if p.n[i] == 0 {
			continue
		}
		if lo.IsZero() || p.first[i].Before(lo) {
			lo = p.first[i]
		}
		if p.first[i].After(hi) {
			hi = p.first[i]
		}
	}
	return hi.Sub(lo)
}

func (p *partTimes) rates() []float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []float64
	for i := range p.n {
		if p.n[i] > 1 {
			out = append(out, float64(p.n[i]-1)/p.last[i].Sub(p.first[i]).Seconds())
		}
	}
	return out
}

// runPlainParse drains INGEST with plain consumers that publish outputs
// (PublishAll, same dedupe ids as the hub's) and ack after the acks.
func (b *bench) runPlainParse(ctx context.Context, fill, n int, outputs [][]byte) (parseSideRun, error) {
	var done atomic.Int64
	var start, end atomic.Int64
	finished := make(chan struct{})
	failed := make(chan error, b.partitions)
	pt := newPartTimes(b.partitions)
	var iters []js.MessagesContext
	var wg sync.WaitGroup
	for p := 0; p < b.partitions; p++ {
		name := fmt.Sprintf("bench-plain-f%d-p%d", fill, p)
		c, err := b.js.CreateOrUpdateConsumer(ctx, wire.DefaultIngestStream, js.ConsumerConfig{
			Durable: name, FilterSubject: wire.IngestPartitionFilter(p),
			AckPolicy: js.AckExplicitPolicy, MaxAckPending: 1,
		})
		if err != nil {
			return parseSideRun{}, err
		}
		defer func() { _ = b.js.DeleteConsumer(context.Background(), wire.DefaultIngestStream, name) }()
		it, err := c.Messages(js.PullMaxMessages(16), js.PullExpiry(5*time.Second)) // as the hub's workers
		if err != nil {
			return parseSideRun{}, err
		}
		iters = append(iters, it)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := it.Next()
				if err != nil {
					if errors.Is(err, js.ErrMsgIteratorClosed) || errors.Is(err, nats.ErrConnectionClosed) {
						return
					}
					// A missed heartbeat or a status: the hub's loop goes on,
					// and so does this one.
					b.pullErrors.Add(1)
					continue
				}
				start.CompareAndSwap(0, time.Now().UnixNano())
				pt.tick(p)
				md, err := m.Metadata()
				if err != nil {
					failed <- err
					return
				}
				_, partner, _ := wire.ParseIngestSubject(m.Subject())
				msgs := make([]*nats.Msg, len(outputs))
				for i, body := range outputs {
					h := nats.Header{}
					h.Set(wire.HdrPartnerID, partner)
					h.Set(wire.HdrMessageType, "INVOIC")
					msgs[i] = &nats.Msg{Subject: wire.ParsedSubject(partner, "INVOIC"), Header: h, Data: body}
				}
				pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err = ejs.PublishAll(pctx, b.js, msgs, func(i int) string { return wire.OutputMsgID(md.Stream, md.Sequence.Stream, i) })
				cancel()
				if err != nil {
					failed <- err
					return
				}
				_ = m.Ack()
				if done.Add(1) == int64(n) {
					end.Store(time.Now().UnixNano())
					close(finished)
				}
			}
		}()
	}
	defer func() {
		for _, it := range iters {
			it.Stop()
		}
		wg.Wait()
	}()
	defer b.watchStall(ctx, fmt.Sprintf("plain-f%d", fill), progressOf(&done), partitionConsumers("bench-plain-f%d-p%d", b.partitions, fill))()
	select {
	case <-finished:
	case err := <-failed:
		return parseSideRun{}, err
	case <-time.After(5 * time.Minute):
		return parseSideRun{}, fmt.Errorf("plain consumers did not finish in 5 minutes (%d of %d)", done.Load(), n)
	}
	d := time.Duration(end.Load() - start.Load())
	return parseSideRun{rate: float64(n) / d.Seconds(), perPart: pt.rates(), spread: pt.startSpread()}, nil
}

// runHubParse runs a fresh hub with the parse stage (and led, if any) over
// the fill until n interchanges were acked, timed from the first message
// the stage sees to the n-th ok in the hub's own counter; shape "serial"
// runs it with one message out per partition and one worker, "nopipe" with
// one message of a partner at a time (hub.partner_pipeline 1), "pipe" four
// of a partner's at once (hub.partner_pipeline 4, or --pipeline), "ledger"
// and "noledger" --pipeline deep when given.
func (b *bench) runHubParse(ctx context.Context, n int, led parse.Ledger, profile io.Writer, emit [][]byte, shape string) (parseSideRun, error) {
	if err := b.resetParseConsumers(ctx); err != nil {
		return parseSideRun{}, err
	}
	cfg := b.config()
	switch shape {
	case "serial":
		cfg.PartitionConcurrency, cfg.PartitionMaxInFlight, cfg.PartnerPipeline = 1, 1, 1
	case "nopipe":
		cfg.PartnerPipeline = 1
	case "pipe":
		cfg.PartnerPipeline, cfg.GroupSettle = cmp.Or(b.pipeline, 4), b.groups
	case "ledger", "noledger":
		cfg.PartnerPipeline, cfg.GroupSettle = b.pipeline, b.groups // 0, "": the defaults
	}
	cfg.SetDefaults()
	if cfg.PartnerPipeline > 1 { // a partner takes at most half the workers (hub's pipelineDepth)
		cfg.PartitionConcurrency = max(cfg.PartitionConcurrency, 2*cfg.PartnerPipeline)
	}
	cfg.PartitionMaxInFlight = max(cfg.PartitionMaxInFlight, cfg.PartitionConcurrency)
	var pc parse.Config
	pc.SetDefaults()
	st := parse.Stage(pc, led)
	if emit != nil {
		st.Handle = func(_ context.Context, m *hub.Message) error {
			for _, body := range emit {
				h := nats.Header{}
				h.Set(wire.HdrPartnerID, m.Partner)
				h.Set(wire.HdrMessageType, "INVOIC")
				m.Emit(wire.ParsedSubject(m.Partner, "INVOIC"), h, body)
			}
			return nil
		}
	}
	var start atomic.Int64
	pt := newPartTimes(b.partitions)
	stage := func(c context.Context, m *hub.Message) error {
		start.CompareAndSwap(0, time.Now().UnixNano())
		pt.tick(m.Partition)
		return st.Handle(c, m)
	}
	h, reg, err := b.newHub(cfg, stage)
	if err != nil {
		return parseSideRun{}, err
	}
	if profile != nil {
		if err := pprof.StartCPUProfile(profile); err != nil {
			return parseSideRun{}, err
		}
		defer pprof.StopCPUProfile()
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- h.Run(rctx) }()
	var progress atomic.Int64
	defer b.watchStall(ctx, "hub-parse", progress.Load, partitionConsumers("ingest-p%d", b.partitions))()
	deadline := time.After(5 * time.Minute)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	var end time.Time
	var notOK float64
	for end.IsZero() {
		select {
		case <-tick.C:
			// The hub's own counter: gathering the registry every tick
			// cost the hub sides up to a sixth of the CPU.
			done := h.Processed()
			progress.Store(done)
			if done >= int64(n) {
				end = time.Now()
				_, notOK = pipelineOutcomes(reg)
			}
		case err := <-errc:
			return parseSideRun{}, fmt.Errorf("hub stopped: %v", err)
		case <-deadline:
			return parseSideRun{}, fmt.Errorf("hub did not finish in 5 minutes (%d of %d)", h.Processed(), n)
		}
	}
	d := end.Sub(time.Unix(0, start.Load()))
	cancel()
	<-errc
	return parseSideRun{rate: float64(n) / d.Seconds(), perPart: pt.rates(), spread: pt.startSpread(),
		writes: gather(reg, "edihub_counter_writes_total"), failures: int(notOK), stageMs: 1000 * histogramMean(reg, "edihub_pipeline_processing_duration_seconds")}, nil
}

// pipelineOutcomes returns the messages that left their partition ok, and
// those that left otherwise (dead letter, poison, duplicate).
func pipelineOutcomes(reg *prometheus.Registry) (ok, other float64) {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		switch mf.GetName() {
		case "edihub_pipeline_messages_total":
			for _, m := range mf.GetMetric() {
				outcome := ""
				for _, l := range m.GetLabel() {
					if l.GetName() == "outcome" {
						outcome = l.GetValue()
					}
				}
				switch outcome {
				case "ok":
					ok += m.GetCounter().GetValue()
				case "retry":
				default:
					other += m.GetCounter().GetValue()
				}
			}
		case "edihub_pipeline_duplicate_interchanges_total":
			for _, m := range mf.GetMetric() {
				other += m.GetCounter().GetValue()
			}
		}
	}
	return ok, other
}

func histogramMean(reg *prometheus.Registry, name string) float64 {
	mfs, _ := reg.Gather()
	var sum float64
	var count uint64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetHistogram().GetSampleSum()
				count += m.GetHistogram().GetSampleCount()
			}
		}
	}
	if count == 0 {
		return 0
	}
	return sum / float64(count)
}

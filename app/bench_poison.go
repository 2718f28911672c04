package app

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/wire"
)

// poisonLatency measures, with the default threshold and backoff, the time
// from a poison message's first delivery to the next message of its
// partition being processed.
func (b *bench) poisonLatency(ctx context.Context) (float64, int, error) {
	var (
		mu       sync.Mutex
		first    time.Time
		attempts int
		movedOn  = make(chan time.Time, 1)
	)
	stage := func(_ context.Context, m *hub.Message) error {
		switch m.Header.Get(hdrBench) {
		case "poison":
			mu.Lock()
			if first.IsZero() {
				first = time.Now()
			}
			attempts++
			mu.Unlock()
			panic("bench: poison")
		case "behind":
			select {
			case movedOn <- time.Now():
			default:
			}
		}
		return nil
	}
	b.resetIngestConsumers(ctx)
	h, _, err := b.newHub(b.config(), stage)
	if err != nil {
		return 0, 0, err
	}
	if err := b.purge(ctx); err != nil {
		return 0, 0, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- h.Run(rctx) }()
	for _, kind := range []string{"poison", "behind"} {
		m := &nats.Msg{Subject: wire.IngestSubject("POISONBENCH"), Header: nats.Header{hdrBench: {kind}}, Data: []byte("x")}
		if _, err := b.js.PublishMsg(ctx, m); err != nil {
			return 0, 0, err
		}
	}
	select {
	case at := <-movedOn:
		cancel()
		<-errc
		mu.Lock()
		defer mu.Unlock()
		return at.Sub(first).Seconds(), attempts, nil
	case err := <-errc:
		return 0, 0, err
	case <-time.After(2 * time.Minute):
		return 0, 0, errors.New("the partition did not move on within 2 minutes")
	}
}

// runMix compares the healthy throughput of tiered mode with 1% transient
// and 0.5% permanent failures against an all-healthy run, in one process.
func (b *bench) runMix(ctx context.Context, n int, rep *BenchReport) error {
	if err := b.purge(ctx); err != nil {
		return err
	}
	// all healthy
	if err := b.publish(ctx, n, nil); err != nil {
		return err
	}
	rate, _, err := b.runHub(ctx, n, b.config(), nil, nil)
	if err != nil {
		return err
	}
	rep.MixAllHealthy = rate

	// the mix: a failing message never reaches the counting stage, so
	// count healthy ones only
	if err := b.purge(ctx); err != nil {
		return err
	}
	kinds := make([]string, n)
	healthy := 0
	for i := range kinds {
		switch r := rand.Float64(); {
		case r < 0.01:
			kinds[i] = "transient"
			rep.MixRetried++
		case r < 0.015:
			kinds[i] = "permanent"
			rep.MixDeadLetters++
		default:
			healthy++
		}
	}
	if err := b.publish(ctx, n, func(i int) nats.Header { return nats.Header{hdrBench: {kinds[i]}} }); err != nil {
		return err
	}
	var tried sync.Map
	stage := func(_ context.Context, m *hub.Message) error {
		switch m.Header.Get(hdrBench) {
		case "transient":
			if _, again := tried.LoadOrStore(m.Seq, true); !again {
				return hub.TransientError("", errors.New("bench: transient"))
			}
			return nil // healed at tier 1
		case "permanent":
			return hub.PermanentError(wire.CauseBusiness, errors.New("bench: permanent"))
		}
		return nil
	}
	cfg := b.config()
	cfg.Retry.Mode = hub.ModeTiered
	cfg.Retry.Tiers = []time.Duration{time.Second, 2 * time.Second}
	rate, _, err = b.runHub(ctx, healthy, cfg, stage, func(m *hub.Message) bool { return m.Header.Get(hdrBench) == "" })
	if err != nil {
		return err
	}
	rep.MixHealthyRate = rate
	rep.MixRatio = rep.MixHealthyRate / rep.MixAllHealthy
	return nil
}

func (b *bench) purge(ctx context.Context) error {
	s, err := b.js.Stream(ctx, wire.DefaultIngestStream)
	if err != nil {
		return err
	}
	return s.Purge(ctx)
}

// hdrBench marks what a bench message does; only the bench stage reads it.
const hdrBench = "x-bench"

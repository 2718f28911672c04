package hub

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/lanes"
	"github.com/edihub/edihub/hub/metrics"
)

// bulkhead is the hub's side of the pauses: it counts each partner's
// outcomes (tracker), pauses a partner over the limit (in memory at once,
// then in the pause bucket, which every instance watches), and tells the
// partitions' lanes and parks when a pause is lifted. A paused partner's
// lane is not taken, and the partner is parked out of its partition's
// window (parking.go): its messages wait in INGEST; nothing of it runs or
// is counted.
type bulkhead struct {
	h     *Hub
	cfg   BulkheadConfig
	t     *tracker
	met   *metrics.Bulkhead
	store *PauseStore

	mu     sync.RWMutex
	paused map[string]Pause
	lanes  map[*lanes.Lanes]struct{}
	parks  map[*parks]struct{}
}

func newBulkhead(h *Hub, cfg BulkheadConfig, met *metrics.Bulkhead) *bulkhead {
	return &bulkhead{h: h, cfg: cfg, t: newTracker(cfg), met: met, paused: map[string]Pause{}, lanes: map[*lanes.Lanes]struct{}{}, parks: map[*parks]struct{}{}}
}

// isPaused is the lanes' question: may partner's head run?
func (b *bulkhead) isPaused(partner string) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	_, ok := b.paused[partner]
	return ok
}

// attach and detach register a partition's lanes for resume.
func (b *bulkhead) attach(l *lanes.Lanes) {
	b.mu.Lock()
	b.lanes[l] = struct{}{}
	b.mu.Unlock()
}

func (b *bulkhead) detach(l *lanes.Lanes) {
	b.mu.Lock()
	delete(b.lanes, l)
	b.mu.Unlock()
}

// attachParks and detachParks register a partition's parked partners for
// resume.
func (b *bulkhead) attachParks(p *parks) {
	b.mu.Lock()
	b.parks[p] = struct{}{}
	b.mu.Unlock()
}

func (b *bulkhead) detachParks(p *parks) {
	b.mu.Lock()
	delete(b.parks, p)
	b.mu.Unlock()
}

// open binds the bucket and loads the pauses before any partition pulls
// (a paused partner stays paused across restarts), then follows it.
func (b *bulkhead) open(ctx context.Context) (follow func(context.Context) error, err error) {
	if b.store, err = OpenPauses(ctx, b.h.js, b.cfg.Bucket, b.h.cfg.Cluster.Replicas); err != nil {
		return nil, err
	}
	loaded := make(chan error, 2) // the load, then the watch's end
	wctx, cancel := context.WithCancel(ctx)
	go func() { loaded <- b.store.watch(wctx, b.set, b.clear, func() { loaded <- nil }) }()
	select {
	case err = <-loaded:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return func(ctx context.Context) error {
		defer cancel()
		t := time.NewTicker(b.cfg.Window)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case err := <-loaded:
				if b.h.nc.IsClosed() {
					return nil // the connection was closed: Run ends, as the partitions' pulls do
				}
				return err // the watch ended: Run stops, the supervisor restarts
			case now := <-t.C:
				b.t.prune(now)
			}
		}
	}, nil
}

// set and clear follow the bucket.
func (b *bulkhead) set(p Pause) {
	b.mu.Lock()
	b.paused[p.Partner] = p
	b.mu.Unlock()
	b.met.Paused(p.Partner)
}

func (b *bulkhead) clear(partner string) {
	was := b.unset(partner)
	b.t.reset(partner) // resumed: its old failures do not pause it again
	if was {
		b.h.log.Info().Str("partner", escape.Line(partner)).Msg("partner resumed: its waiting messages run, in order")
	}
}

// unset lifts partner's pause here and offers its lanes again; it
// reports whether the partner was paused.
func (b *bulkhead) unset(partner string) bool {
	b.mu.Lock()
	_, was := b.paused[partner]
	delete(b.paused, partner)
	ls := make([]*lanes.Lanes, 0, len(b.lanes))
	for l := range b.lanes {
		ls = append(ls, l)
	}
	pks := make([]*parks, 0, len(b.parks))
	for p := range b.parks {
		pks = append(pks, p)
	}
	b.mu.Unlock()
	b.met.Resumed(partner)
	for _, l := range ls {
		l.Wake(partner)
	}
	for _, p := range pks {
		p.wake(partner)
	}
	return was
}

// observe counts one settled message of partner (failed: dead-lettered
// or quarantined) and pauses the partner when it crosses the limit.
func (b *bulkhead) observe(partner string, failed bool) {
	if partner == "" || b.isPaused(partner) {
		return
	}
	over, failures, total := b.t.record(partner, failed, time.Now())
	if over {
		b.pause(partner, failures, total)
	}
}

// pause holds partner here at once, then stores the pause for every
// instance, alerts and audits (once: the first instance to store it).
func (b *bulkhead) pause(partner string, failures, total int) {
	p := Pause{Partner: partner, At: time.Now().UTC(), By: b.h.actor, Failures: failures, Messages: total, Window: b.cfg.Window.String()}
	b.set(p)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.h.runCtx), 10*time.Second)
	defer cancel()
	created, err := b.store.Put(ctx, p)
	if err != nil {
		// Not held on this instance alone: no resume could lift a pause
		// the bucket does not have. Its counts stay over the limit, so
		// its next settled message tries again.
		b.unset(partner)
		b.h.log.Error().Err(err).Str("partner", escape.Line(partner)).Msg("pause not stored; the partner runs on and is paused at its next settled message")
		return
	}
	if !created {
		return
	}
	b.met.Took()
	summary := fmt.Sprintf("partner %s paused: %d of its last %d messages failed within %s; its messages wait in INGEST (edihub partner resume %s --reason ...)",
		escape.Line(partner), failures, total, b.cfg.Window, escape.Line(partner))
	b.h.log.Warn().Str("partner", escape.Line(partner)).Int("failures", failures).Int("messages", total).Msg(summary)
	b.h.alerter.Fire(ctx, alert.Alert{Name: "PartnerPaused", Severity: "critical", Partner: partner, Summary: summary,
		Labels: map[string]string{"failures": strconv.Itoa(failures), "messages": strconv.Itoa(total)}})
	if _, err := b.h.audit.Append(ctx, audit.Event{Actor: b.h.actor, Action: "partner-paused", IDs: []string{partner},
		Reason: "bulkhead: failure limit crossed", Details: map[string]string{
			"failures": strconv.Itoa(failures), "messages": strconv.Itoa(total), "window": b.cfg.Window.String()},
	}, fmt.Sprintf("partner-paused-%s-%d", pauseKey(partner), p.At.UnixNano())); err != nil {
		b.h.log.Error().Err(err).Msg("audit event for a pause not written")
	}
}

// lanesHeld sums what the partitions have in hand (for tests and status).
func (b *bulkhead) lanesHeld() (held, running int, barrier bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for l := range b.lanes {
		h, r, br := l.InHand()
		held, running, barrier = held+h, running+r, barrier || br
	}
	return held, running, barrier
}

// parkedPartners counts the parked partners over the partitions.
func (b *bulkhead) parkedPartners() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for p := range b.parks {
		n += p.parked()
	}
	return n
}

package client

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/wire"
)

// Outcomes of a stored file, once the hub has dealt with it.
const (
	OutcomeParsed        = "parsed"
	OutcomeDuplicate     = "duplicate"      // the ledger had it: acked without outputs
	OutcomeDeadLettered  = "dead-lettered"  // edi.<stage>.dlq.<cause>
	OutcomeQuarantined   = "quarantined"    // edi.poison.<stage>
	OutcomeRetrying      = "retrying"       // tiered retry scheduled
	OutcomeAlreadyStored = "already-stored" // the server had these bytes from this partner (Nats-Msg-Id)
	OutcomeNotSeen       = "not-seen"       // nothing heard within the wait
)

// Watch listens, before the first file goes out, to what the hub
// says about the partner's interchanges: parsed outputs (matched by the
// x-correlation-id NewMessage set) and the hub's events on edi.events.> (matched
// by the INGEST stream and sequence the server acked). Both are core NATS
// subscriptions; a user not allowed to read events (a partner) still sees
// its own parsed outputs, and files without a verdict are "not-seen".
type Watch struct {
	mu      sync.Mutex
	parsed  map[string]string // correlation id -> first output subject
	events  map[seqKey]wire.Event
	changed chan struct{}
	subs    []*nats.Subscription
}

type seqKey struct {
	stream string
	seq    uint64
}

// WatchOutcomes subscribes to what the hub says about partner's
// interchanges; Stop ends it.
func WatchOutcomes(nc *nats.Conn, partner string) (*Watch, error) {
	w := &Watch{parsed: map[string]string{}, events: map[seqKey]wire.Event{}, changed: make(chan struct{}, 1)}
	sub, err := nc.Subscribe(wire.ParsedSubject(partner, ">"), func(m *nats.Msg) {
		corr := m.Header.Get(wire.HdrCorrelationID)
		if corr == "" {
			return
		}
		w.mu.Lock()
		if _, ok := w.parsed[corr]; !ok {
			w.parsed[corr] = m.Subject
		}
		w.mu.Unlock()
		w.poke()
	})
	if err != nil {
		return nil, err
	}
	w.subs = append(w.subs, sub)
	sub, err = nc.Subscribe(wire.EventSubjectPrefix+">", func(m *nats.Msg) {
		var ev wire.Event
		if json.Unmarshal(m.Data, &ev) != nil || EventOutcome(ev.Kind) == "" || ev.Partner != partner {
			return
		}
		w.mu.Lock()
		w.events[seqKey{ev.Stream, ev.Seq}] = ev
		w.mu.Unlock()
		w.poke()
	})
	if err != nil {
		w.Stop()
		return nil, err
	}
	w.subs = append(w.subs, sub)
	return w, nc.Flush() // the server has the interest before the first publish
}

func (w *Watch) poke() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Stop unsubscribes.
func (w *Watch) Stop() {
	for _, s := range w.subs {
		_ = s.Unsubscribe()
	}
}

// EventOutcome maps a hub event to a final outcome ("" = not final).
func EventOutcome(kind string) string {
	switch kind {
	case wire.EventDuplicateSkipped:
		return OutcomeDuplicate
	case wire.EventDeadLettered:
		return OutcomeDeadLettered
	case wire.EventQuarantined:
		return OutcomeQuarantined
	case wire.EventRetryScheduled:
		return OutcomeRetrying
	}
	return ""
}

// resolve fills r's outcome when the hub has said something about it.
func (w *Watch) resolve(r *Result) bool {
	if r.Outcome != "" {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev, ok := w.events[seqKey{r.Stream, r.Seq}]; ok {
		r.Outcome, r.Where, r.Detail = EventOutcome(ev.Kind), ev.Subject, ev.Error
		return true
	}
	if subj, ok := w.parsed[r.CorrelationID]; ok {
		r.Outcome, r.Where = OutcomeParsed, subj
		return true
	}
	return false
}

// Wait resolves every stored file it can within d, returning early once
// all have an outcome; the rest become "not-seen".
func (w *Watch) Wait(ctx context.Context, results []Result, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		open := 0
		for i := range results {
			if results[i].OK && !w.resolve(&results[i]) {
				open++
			}
		}
		if open == 0 {
			return
		}
		select {
		case <-w.changed:
			continue
		case <-ctx.Done():
		case <-timer.C:
		}
		for i := range results {
			if results[i].OK && !w.resolve(&results[i]) {
				results[i].Outcome = OutcomeNotSeen
			}
		}
		return
	}
}

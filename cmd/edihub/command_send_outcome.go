package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/wire"
)

// Outcomes send reports per file once the hub has dealt with it.
const (
	outcomeParsed        = "parsed"
	outcomeDuplicate     = "duplicate"      // the ledger had it: acked without outputs
	outcomeDeadLettered  = "dead-lettered"  // edi.<stage>.dlq.<cause>
	outcomeQuarantined   = "quarantined"    // edi.poison.<stage>
	outcomeRetrying      = "retrying"       // tiered retry scheduled
	outcomeAlreadyStored = "already-stored" // the server had these bytes from this partner (Nats-Msg-Id)
	outcomeNotSeen       = "not-seen"       // nothing heard within --outcome
)

// outcomeWatch listens, before the first file goes out, to what the hub
// says about the partner's interchanges: parsed outputs (matched by the
// x-correlation-id send set) and the hub's events on edi.events.> (matched
// by the INGEST stream and sequence the server acked). Both are core NATS
// subscriptions; a user not allowed to read events (a partner) still sees
// its own parsed outputs, and files without a verdict are "not-seen".
type outcomeWatch struct {
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

func watchOutcomes(nc *nats.Conn, partner string) (*outcomeWatch, error) {
	w := &outcomeWatch{parsed: map[string]string{}, events: map[seqKey]wire.Event{}, changed: make(chan struct{}, 1)}
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
		if json.Unmarshal(m.Data, &ev) != nil || eventOutcome(ev.Kind) == "" || ev.Partner != partner {
			return
		}
		w.mu.Lock()
		w.events[seqKey{ev.Stream, ev.Seq}] = ev
		w.mu.Unlock()
		w.poke()
	})
	if err != nil {
		w.stop()
		return nil, err
	}
	w.subs = append(w.subs, sub)
	return w, nc.Flush() // the server has the interest before the first publish
}

func (w *outcomeWatch) poke() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *outcomeWatch) stop() {
	for _, s := range w.subs {
		_ = s.Unsubscribe()
	}
}

// eventOutcome maps a hub event to a final outcome ("" = not final).
func eventOutcome(kind string) string {
	switch kind {
	case wire.EventDuplicateSkipped:
		return outcomeDuplicate
	case wire.EventDeadLettered:
		return outcomeDeadLettered
	case wire.EventQuarantined:
		return outcomeQuarantined
	case wire.EventRetryScheduled:
		return outcomeRetrying
	}
	return ""
}

// resolve fills r's outcome when the hub has said something about it.
func (w *outcomeWatch) resolve(r *sendResult) bool {
	if r.Outcome != "" {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev, ok := w.events[seqKey{r.Stream, r.Seq}]; ok {
		r.Outcome, r.Where, r.Detail = eventOutcome(ev.Kind), ev.Subject, ev.Error
		return true
	}
	if subj, ok := w.parsed[r.CorrelationID]; ok {
		r.Outcome, r.Where = outcomeParsed, subj
		return true
	}
	return false
}

// wait resolves every stored file it can within d, returning early once
// all have an outcome; the rest become "not-seen".
func (w *outcomeWatch) wait(ctx context.Context, results []sendResult, d time.Duration) {
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
				results[i].Outcome = outcomeNotSeen
			}
		}
		return
	}
}

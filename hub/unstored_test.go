package hub

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/hub/metrics"
)

// outcomeStore is a real bbolt store whose outcome writes are refused
// while refuse is set.
type outcomeStore struct {
	*counter.Store
	refuse bool
}

func (s *outcomeStore) RecordFailure(k counter.Key, f counter.Failure) (counter.Record, error) {
	if s.refuse {
		return counter.Record{}, fmt.Errorf("record failure of %s: %w", k, syscall.ENOSPC)
	}
	return s.Store.RecordFailure(k, f)
}

// withUnstored stores what is held and what the in-flight table counts
// at most once: an outcome a peer stored already (the record holds it, or
// has no solo mark left to explain) is not stored again, and the table's
// count is cleared; when the read failed, nothing is judged and the
// count is stored; what the store refuses stays held and counted.
func TestWithUnstoredStoresEachOutcomeOnce(t *testing.T) {
	k := counter.Key{Stream: "INGEST", Consumer: "ingest-p0", Seq: 5}
	solo := counter.Failure{Stage: "parse", Kind: counter.KindError, Class: "transient", Fingerprint: "fp", Delivery: 2, Solo: true,
		At: time.Now().UTC().Add(-time.Minute)}
	for _, c := range []struct {
		name        string
		peerStored  bool // a peer stored solo already
		held        bool // this process holds solo
		readFailed  bool
		refuse      bool
		wantCount   int // explained failures in the store after
		wantDeaths  int
		wantCounted int // the table's count after
		wantHeld    int
	}{
		{name: "the table's run, stored by a peer while this process was down", peerStored: true, wantCount: 1},
		{name: "the table's run, not stored", wantCount: 1},
		{name: "the table's run, the read failed", readFailed: true, wantCount: 1},
		{name: "held, stored by a peer meanwhile", peerStored: true, held: true, wantCount: 1},
		{name: "held, not stored", held: true, wantCount: 1},
		{name: "held, refused again", held: true, refuse: true, wantDeaths: 1, wantCounted: 1, wantHeld: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bolt, err := counter.Open(filepath.Join(dir, "counter.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer bolt.Close()
			tab, _, err := counter.OpenInFlight(filepath.Join(dir, "inflight.map"), 4)
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			st := &outcomeStore{Store: bolt}
			cfg := fastConfig()
			cfg.setDefaults()
			h := &Hub{cfg: cfg, store: st, inflight: tab, unstored: map[counter.Key][]heldOutcome{},
				met: metrics.New(prometheus.NewRegistry()), stages: []Stage{{Name: "parse"}}}
			if _, err := bolt.MarkSolo(k); err != nil { // the run alone whose outcome was refused
				t.Fatal(err)
			}
			if c.peerStored {
				if _, err := bolt.RecordFailure(k, solo); err != nil {
					t.Fatal(err)
				}
			}
			tab.SetUnstored(2, k.Seq, 1)
			if c.held {
				h.holdLocked(k, heldOutcome{f: solo, kept: time.Now()})
			}
			rec, err := bolt.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			if c.readFailed {
				rec = counter.Record{}
			}
			st.refuse = c.refuse
			decided := h.withUnstored(0, k, rec, !c.readFailed)
			after, err := bolt.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			if after.Count != c.wantCount || after.Deaths() != c.wantDeaths {
				t.Fatalf("stored: count %d deaths %d, want %d and %d", after.Count, after.Deaths(), c.wantCount, c.wantDeaths)
			}
			if decided.Count != 1 || decided.Deaths() != 0 {
				t.Fatalf("decided on count %d deaths %d, want the one outcome and no death", decided.Count, decided.Deaths())
			}
			if _, n := tab.FindUnstored(k.Seq); n != c.wantCounted {
				t.Fatalf("the table counts %d, want %d", n, c.wantCounted)
			}
			if h.unstoredN != c.wantHeld {
				t.Fatalf("%d held, want %d", h.unstoredN, c.wantHeld)
			}
		})
	}
}

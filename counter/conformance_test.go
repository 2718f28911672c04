package counter

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// store is what the hub needs of an attempt store (hub.AttemptStore),
// plus Close.
type store interface {
	Get(k Key) (Record, error)
	RecordFailure(k Key, f Failure) (Record, error)
	MarkSolo(k Key) (Record, error)
	Delete(k Key) error
	Purge() (int, error)
	Len() (int, error)
	Close() error
}

var (
	_ store = (*Store)(nil)
	_ store = (*KVStore)(nil)
)

// testName names t's backing (file or bucket) the same on every open.
func testName(t *testing.T) string {
	sum := sha256.Sum256([]byte(t.Name()))
	return "c" + hex.EncodeToString(sum[:8])
}

func mustLen(t *testing.T, s store, want int) {
	t.Helper()
	if n, err := s.Len(); err != nil || n != want {
		t.Fatalf("len %d (err %v), want %d", n, err, want)
	}
}

// runStoreConformance checks the semantics the hub relies on. open returns
// a store on t's backing (the same records when called again in one test)
// with the default TTL; the store is closed when the test ends.
func runStoreConformance(t *testing.T, open func(t *testing.T) store) {
	t.Run("absent key", func(t *testing.T) {
		s := open(t)
		r, err := s.Get(Key{"S", "C", 1})
		if err != nil || r.Count != 0 || r.SoloRuns != 0 || !r.FirstAt.IsZero() || r.Failures != nil {
			t.Fatalf("get of an absent key: %+v %v", r, err)
		}
		if err := s.Delete(Key{"S", "C", 1}); err != nil {
			t.Fatalf("delete of an absent key: %v", err)
		}
		mustLen(t, s, 0)
		if n, err := s.Purge(); err != nil || n != 0 {
			t.Fatalf("purge of nothing: %d %v", n, err)
		}
	})
	t.Run("record failures", func(t *testing.T) {
		s := open(t)
		k := Key{"INGEST", "ingest-p3", 42}
		first := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
		r, err := s.RecordFailure(k, Failure{Kind: KindPanic, Fingerprint: "a", Delivery: 1, At: first})
		if err != nil || r.Count != 1 || !r.FirstAt.Equal(first) || !r.LastAt.Equal(first) {
			t.Fatalf("first failure: %+v %v", r, err)
		}
		var last Record
		for i := 2; i <= maxKept+3; i++ {
			fp := "a"
			if i == maxKept+3 {
				fp = "b"
			}
			if last, err = s.RecordFailure(k, Failure{Kind: KindError, Fingerprint: fp, Delivery: uint64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if last.Count != maxKept+3 || len(last.Failures) != maxKept || last.SameFingerprint() || !last.FirstAt.Equal(first) {
			t.Fatalf("after %d failures: count %d kept %d first %v", maxKept+3, last.Count, len(last.Failures), last.FirstAt)
		}
		if f, _ := last.Last(); f.Delivery != maxKept+3 || f.At.IsZero() {
			t.Fatalf("last failure %+v: the store fills in At", f)
		}
		got, err := s.Get(k)
		if err != nil || got.Count != last.Count || len(got.Failures) != maxKept {
			t.Fatalf("get: %+v %v", got, err)
		}
		mustLen(t, s, 1)
	})
	t.Run("keys are distinct", func(t *testing.T) {
		s := open(t)
		k := Key{"S.x", "C*>", 7}
		if _, err := s.RecordFailure(k, Failure{Fingerprint: "x"}); err != nil {
			t.Fatal(err)
		}
		for _, other := range []Key{{"S.x", "C*>", 8}, {"S.x", "C", 7}, {"S", "x.C*>", 7}, {"", "", 7}, {"S.x", "C*>", 0}} {
			if r, err := s.Get(other); err != nil || r.Count != 0 {
				t.Fatalf("%v has a record: %+v %v", other, r, err)
			}
		}
		if err := s.Delete(Key{"S.x", "C*>", 8}); err != nil {
			t.Fatal(err)
		}
		if r, _ := s.Get(k); r.Count != 1 {
			t.Fatalf("deleting a neighbour removed %v", k)
		}
	})
	t.Run("delete", func(t *testing.T) {
		s := open(t)
		k := Key{"S", "C", 3}
		for range 2 {
			if _, err := s.RecordFailure(k, Failure{Fingerprint: "x"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Delete(k); err != nil {
			t.Fatal(err)
		}
		if r, err := s.Get(k); err != nil || r.Count != 0 {
			t.Fatalf("after delete: %+v %v", r, err)
		}
		mustLen(t, s, 0)
		if err := s.Delete(k); err != nil {
			t.Fatalf("second delete: %v", err)
		}
		// a record after a delete starts afresh
		if r, err := s.RecordFailure(k, Failure{Fingerprint: "x"}); err != nil || r.Count != 1 {
			t.Fatalf("after delete and a failure: %+v %v", r, err)
		}
		mustLen(t, s, 1)
	})
	t.Run("solo runs", func(t *testing.T) {
		s := open(t)
		k := Key{"S", "C", 9}
		if r, err := s.MarkSolo(k); err != nil || r.SoloRuns != 1 || r.FirstAt.IsZero() || r.Count != 0 {
			t.Fatalf("first solo run: %+v %v", r, err)
		}
		if _, err := s.MarkSolo(k); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordFailure(k, Failure{Kind: KindError, Solo: true, Fingerprint: "x"}); err != nil {
			t.Fatal(err)
		}
		r, err := s.MarkSolo(k)
		if err != nil || r.Deaths() != 2 || r.Count != 1 || r.SoloExplained != 1 {
			t.Fatalf("deaths %d count %d (err %v), want 2 and 1", r.Deaths(), r.Count, err)
		}
	})
	t.Run("survives reopen", func(t *testing.T) {
		s := open(t)
		k := Key{"INGEST", "ingest-p1", 5}
		for i := 1; i <= 3; i++ {
			if _, err := s.RecordFailure(k, Failure{Kind: KindTimeout, Fingerprint: "fp", Delivery: uint64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.MarkSolo(k); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = open(t)
		r, err := s.Get(k)
		if err != nil || r.Count != 3 || r.SoloRuns != 1 || r.Failures[2].Delivery != 3 || r.Failures[0].Kind != KindTimeout {
			t.Fatalf("after reopen: %+v %v", r, err)
		}
		mustLen(t, s, 1)
	})
	t.Run("an outcome stored twice counts once", func(t *testing.T) {
		// Two hubs that kept the same refused outcome (announced to each
		// other) may both store it: it is stamped when kept, so the second
		// write changes nothing. A solo outcome explains a solo mark only
		// while one is unexplained (a refused mark has no outcome to match).
		s := open(t)
		k := Key{"INGEST", "ingest-p0", 8}
		at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
		kept := Failure{Kind: KindError, Class: "transient", Fingerprint: "fp", Delivery: 2, Solo: true, At: at}
		if _, err := s.MarkSolo(k); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if r, err := s.RecordFailure(k, kept); err != nil || r.Count != 1 || r.Deaths() != 0 {
				t.Fatalf("kept outcome stored: %+v %v, want count 1 and no death", r, err)
			}
		}
		again := kept
		again.Delivery, again.At = 3, at.Add(time.Second) // another attempt, solo, but no mark stored for it
		r, err := s.RecordFailure(k, again)
		if err != nil || r.Count != 2 || r.Deaths() != 0 || r.SoloExplained != 1 {
			t.Fatalf("a solo outcome without its mark: %+v %v, want count 2, deaths 0, one mark explained", r, err)
		}
		if _, err := s.MarkSolo(k); err != nil { // a run alone the process dies in
			t.Fatal(err)
		}
		if r, err := s.Get(k); err != nil || r.Deaths() != 1 {
			t.Fatalf("the death after: %+v %v, want 1", r, err)
		}
	})
	t.Run("purge by ttl", func(t *testing.T) {
		s := open(t)
		old := time.Now().Add(-8 * 24 * time.Hour) // past the default 7 days
		for seq := uint64(1); seq <= 5; seq++ {
			if _, err := s.RecordFailure(Key{"S", "C", seq}, Failure{Fingerprint: "x", At: old}); err != nil {
				t.Fatal(err)
			}
		}
		for seq := uint64(4); seq <= 6; seq++ { // 4 and 5 refreshed, 6 new
			if _, err := s.RecordFailure(Key{"S", "C", seq}, Failure{Fingerprint: "x"}); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.Purge()
		if err != nil || n != 3 {
			t.Fatalf("purged %d (err %v), want 3", n, err)
		}
		mustLen(t, s, 3)
		if r, _ := s.Get(Key{"S", "C", 1}); r.Count != 0 {
			t.Fatalf("expired record kept: %+v", r)
		}
		if r, _ := s.Get(Key{"S", "C", 5}); r.Count != 2 {
			t.Fatalf("refreshed record lost: %+v", r)
		}
	})
	t.Run("concurrent failures on one key", func(t *testing.T) {
		s := open(t)
		k := Key{"S", "C", 11}
		const each = 25
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					var err error
					if i%5 == 0 {
						_, err = s.MarkSolo(k)
					} else {
						_, err = s.RecordFailure(k, Failure{Fingerprint: "x", Delivery: uint64(w*each + i)})
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		r, err := s.Get(k)
		if err != nil || r.Count != 2*(each-each/5) || r.SoloRuns != 2*each/5 {
			t.Fatalf("count %d solo %d (err %v), want %d and %d", r.Count, r.SoloRuns, err, 2*(each-each/5), 2*each/5)
		}
	})
}

func TestBoltStoreConformance(t *testing.T) {
	dir := t.TempDir()
	runStoreConformance(t, func(t *testing.T) store {
		s, err := Open(filepath.Join(dir, testName(t)+".db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

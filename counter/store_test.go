package counter

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestRecordsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := Key{Stream: "INGEST", Consumer: "ingest-p3", Seq: 42}
	for i := 1; i <= 3; i++ {
		if _, err := s.RecordFailure(k, Failure{Kind: KindPanic, Fingerprint: "fp", Delivery: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Get(k)
	if err != nil {
		t.Fatal(err)
	}
	if r.Count != 3 || !r.SameFingerprint() || r.Failures[2].Delivery != 3 {
		t.Fatalf("after reopen: %+v", r)
	}
	if other, _ := s.Get(Key{Stream: "INGEST", Consumer: "ingest-p3", Seq: 43}); other.Count != 0 {
		t.Fatalf("neighbour has a record: %+v", other)
	}
	if err := s.Delete(k); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Get(k); r.Count != 0 {
		t.Fatalf("after delete: %+v", r)
	}
}

func TestPurgeRemovesOnlyExpired(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s, err := Open(filepath.Join(t.TempDir(), "c.db"), &Options{TTL: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seq := uint64(1); seq <= 10; seq++ {
		if _, err := s.RecordFailure(Key{"S", "C", seq}, Failure{Fingerprint: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(30 * time.Minute)
	for seq := uint64(5); seq <= 6; seq++ { // refreshed: must survive
		if _, err := s.RecordFailure(Key{"S", "C", seq}, Failure{Fingerprint: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(45 * time.Minute)
	n, err := s.Purge()
	if err != nil {
		t.Fatal(err)
	}
	if n != 8 {
		t.Fatalf("purged %d, want 8", n)
	}
	if l, _ := s.Len(); l != 2 {
		t.Fatalf("left %d, want 2", l)
	}
	if r, _ := s.Get(Key{"S", "C", 5}); r.Count != 2 {
		t.Fatalf("refreshed record lost: %+v", r)
	}
}

func TestRecordKeepsLatestAndCountsAll(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := Key{"S", "C", 1}
	var r Record
	for i := 0; i < maxKept+5; i++ {
		fp := "a"
		if i == maxKept+4 {
			fp = "b"
		}
		if r, err = s.RecordFailure(k, Failure{Fingerprint: fp, Delivery: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if r.Count != maxKept+5 || len(r.Failures) != maxKept || r.SameFingerprint() {
		t.Fatalf("record: count %d kept %d same %v", r.Count, len(r.Failures), r.SameFingerprint())
	}
	if last, _ := r.Last(); last.Delivery != maxKept+5 {
		t.Fatalf("last delivery %d", last.Delivery)
	}
}

func TestConcurrentWritersBatch(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "c.db"), &Options{Writers: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := s.RecordFailure(Key{"S", "C", uint64(w)}, Failure{Fingerprint: "x"}); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	for w := 0; w < 8; w++ {
		if r, _ := s.Get(Key{"S", "C", uint64(w)}); r.Count != 20 {
			t.Fatalf("writer %d: count %d", w, r.Count)
		}
	}
}

func TestSoloDeathsAttributed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := Key{"S", "C", 9}
	// run 1 alone: the process died; run 2 alone: an explained failure;
	// run 3 alone: died again
	if _, err := s.MarkSolo(k); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkSolo(k); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordFailure(k, Failure{Kind: KindError, Solo: true, Fingerprint: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkSolo(k); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path, nil) // as after the restart that follows a death
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Get(k)
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Deaths(); d != 2 || r.Count != 1 {
		t.Fatalf("deaths %d count %d, want 2 and 1", d, r.Count)
	}
}

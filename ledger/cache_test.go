package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// The hub asks about every interchange; the answer for a key the partner
// never sent costs no round trip, a key the store holds is checked on the
// server, and a record whose publish never happened is no duplicate.
func TestKVCacheAnswersLocallyAndTheServerDecides(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	stored := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "1"}
	if _, err := js.PublishMsg(context.Background(), s.RecordMsgBy(stored, "INGEST:1")); err != nil {
		t.Fatal(err)
	}
	if dup, err := s.Duplicate(stored, "INGEST:2"); err != nil || !dup {
		t.Fatalf("stored key: %v %v", dup, err)
	}
	before := s.localAnswers.Load()
	fresh := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "2"}
	if dup, err := s.Duplicate(fresh, "INGEST:3"); err != nil || dup {
		t.Fatalf("fresh key: %v %v", dup, err)
	}
	if s.localAnswers.Load() != before+1 {
		t.Fatal("a key the partner never sent went to the server")
	}
	// Recorded in the cache, but its publish never happened (the attempt
	// failed): the server says no.
	tentative := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "3"}
	_ = s.RecordMsgBy(tentative, "INGEST:4")
	if dup, err := s.Duplicate(tentative, "INGEST:5"); err != nil || dup {
		t.Fatalf("unpublished record: %v %v", dup, err)
	}
	// Another process (a restart) reads the partner's entries from the bucket.
	s2 := openKV(t, js, nil)
	if dup, err := s2.Duplicate(stored, "INGEST:2"); err != nil || !dup {
		t.Fatalf("after a restart: %v %v", dup, err)
	}
	if dup, _ := s2.Duplicate(fresh, "INGEST:3"); dup || s2.localAnswers.Load() != 1 {
		t.Fatalf("after a restart, fresh key: %v, local answers %d", dup, s2.localAnswers.Load())
	}
	// Another partner's identical control reference is its own.
	other := stored
	other.Partner = "GLOBEX"
	if dup, _ := s2.Duplicate(other, "INGEST:9"); dup {
		t.Fatal("another partner's key counted as a duplicate")
	}
}

// Two instances own a partition one after the other: what the second
// recorded while the first was away must not be taken for new by the
// first once it forgets its cache of the partner.
func TestKVCacheForgetAfterAnotherInstanceWrote(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	a, b := openKV(t, js, nil), openKV(t, js, nil)
	k := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "7"}
	if dup, err := a.Duplicate(k, "INGEST:1"); err != nil || dup { // a loads ACME's (empty) entries
		t.Fatalf("first look: %v %v", dup, err)
	}
	if _, err := js.PublishMsg(context.Background(), b.RecordMsgBy(k, "INGEST:2")); err != nil {
		t.Fatal(err)
	}
	if dup, _ := a.Duplicate(k, "INGEST:3"); dup {
		t.Fatal("setup: the stale cache was expected to miss the other instance's entry")
	}
	a.Forget("ACME")
	if dup, err := a.Duplicate(k, "INGEST:3"); err != nil || !dup {
		t.Fatalf("after Forget the other instance's entry must count: %v %v", dup, err)
	}
}

// TestKVCacheLoadFailureIsNotKept: a partner whose entries could not be
// read (the server away, as in a leader election) is read again on the
// next lookup instead of failing for good, and a lookup fails within the
// store's Timeout rather than holding the caller.
func TestKVCacheLoadFailureIsNotKept(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	s, err := OpenKV(t.Context(), j, &KVOptions{Bucket: "ledger-reload", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	k := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "1"}
	srv.Stop()
	start := time.Now()
	if _, err := s.Duplicate(k, "INGEST:1"); err == nil {
		t.Fatal("a lookup with the server away answered")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the failed lookup took %v", d)
	}
	jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: srv.DataDir, Listen: srv.HostPort})
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		dup, err := s.Duplicate(k, "INGEST:1")
		return err == nil && !dup
	}, "the partner is read again once the server is back")
}

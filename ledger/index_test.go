package ledger

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// Once read, the index answers without the server: lookups go on while the
// server is away, and say the right thing.
func TestKVIndexAnswersWithoutTheServer(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, &KVOptions{Timeout: time.Second})
	stored := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "1"}
	mustSeen(t, s, stored, false) // the first lookup reads the bucket
	if err := s.Commit([]Key{stored}, "INGEST:1")(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if dup, err := s.Duplicate(stored, "INGEST:2"); err != nil || !dup {
		t.Fatalf("stored key, server away: %v %v", dup, err)
	}
	fresh := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "2"}
	if dup, err := s.Duplicate(fresh, "INGEST:3"); err != nil || dup {
		t.Fatalf("fresh key, server away: %v %v", dup, err)
	}
	// Another partner's identical control reference is its own.
	other := stored
	other.Partner = "GLOBEX"
	if dup, _ := s.Duplicate(other, "INGEST:9"); dup {
		t.Fatal("another partner's key counted as a duplicate")
	}
	// A commit the server never stored is not in the index.
	tentative := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "3"}
	if err := s.Commit([]Key{tentative}, "INGEST:4")(t.Context()); err == nil {
		t.Fatal("a commit with the server away succeeded")
	}
	if dup, err := s.Duplicate(tentative, "INGEST:5"); err != nil || dup {
		t.Fatalf("unstored record: %v %v", dup, err)
	}
}

// Two instances own a partition one after the other: what the second
// recorded while the first was away counts for the first once it was told
// to Forget (it writes a fence and waits for its watch to pass it).
func TestKVForgetWaitsForAnotherInstancesRecords(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	a, b := openKV(t, js, nil), openKV(t, js, nil)
	for i := range 50 {
		k := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: fmt.Sprint(i)}
		if dup, err := a.Duplicate(k, "INGEST:1"); err != nil || dup {
			t.Fatalf("first look: %v %v", dup, err)
		}
		if err := b.Commit([]Key{k}, "INGEST:2")(t.Context()); err != nil {
			t.Fatal(err)
		}
		a.Forget("ACME")
		if dup, err := a.Duplicate(k, "INGEST:3"); err != nil || !dup {
			t.Fatalf("round %d: after Forget the other instance's record must count: %v %v", i, dup, err)
		}
	}
}

// A store whose bucket could not be read (the server away, as in a leader
// election) fails its lookups within its Timeout rather than holding the
// caller, and answers once the server is back.
func TestKVIndexReadFailureIsNotKept(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	s, err := OpenKV(t.Context(), j, &KVOptions{Bucket: "ledger-reload", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	k := Key{Partner: "ACME", Sender: "S", Recipient: "R", ControlRef: "1"}
	srv.Stop()
	start := time.Now()
	if _, err := s.Duplicate(k, "INGEST:1"); err == nil {
		t.Fatal("a lookup with the server away answered before the bucket was read")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the failed lookup took %v", d)
	}
	jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: srv.DataDir, Listen: srv.HostPort})
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		dup, err := s.Duplicate(k, "INGEST:1")
		return err == nil && !dup
	}, "the bucket is read once the server is back")
}

// The bucket can be written by operators' tools: entries the index cannot
// read are skipped, never trusted, and never stop it.
func TestKVIndexSkipsUnreadableEntries(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, nil)
	ctx := context.Background()
	good := Key{Partner: "ACME", ControlRef: "ok"}
	d := fmt.Sprintf("%x", digestOf(good))
	for key, value := range map[string]string{
		batchPrefix + "junk1":                        "not a batch",
		batchPrefix + "junk2":                        batchHeader + "\nzz notatime\n" + d[:10] + " 2026-01-01T00:00:00Z\n\n \n",
		batchPrefix + "junk3":                        batchHeader + "\n" + d + " yesterday INGEST:1",
		"ix.0011223344556677.nothex":                 "2026-01-01T00:00:00Z",
		"ix.0011223344556677." + d[:len(d)-2] + "zz": "2026-01-01T00:00:00Z",
		"ix.0011223344556677." + d:                   "garbage",
		kvLegacyFlag:                                 "never",
	} {
		if _, err := s.kv.PutString(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	mustSeen(t, s, good, false)
	// an origin that would break the line format is not written as one
	if err := s.Commit([]Key{good}, "INGEST:1\n"+d+" 2026-01-01T00:00:00Z")(t.Context()); err != nil {
		t.Fatal(err)
	}
	mustSeen(t, s, good, true)
	fresh := openKV(t, js, nil)
	if dup, err := fresh.Duplicate(good, "INGEST:1"); err != nil || !dup {
		t.Fatalf("a record whose origin was dropped counts for every message: %v %v", dup, err)
	}
}

func digestOf(k Key) digest { return digest(sha256.Sum256(k.bytes())) }

// A group nobody waits for (a worker that gave up before its commit) is
// still settled, by its guard after the store's Timeout: the groups behind
// it go out, and its records count.
func TestKVCommitNobodyWaitsFor(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, &KVOptions{Timeout: 300 * time.Millisecond})
	var keys []Key
	for i := range 4 {
		keys = append(keys, Key{Partner: "ACME", ControlRef: fmt.Sprint("unwaited", i)})
		_ = s.Commit(keys[i:i+1], fmt.Sprintf("INGEST:%d", i)) // never waited for
	}
	last := Key{Partner: "ACME", ControlRef: "waited"}
	if err := s.Commit([]Key{last}, "INGEST:9")(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(keys, last) {
		mustSeen(t, s, k, true)
	}
}

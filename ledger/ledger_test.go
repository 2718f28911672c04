package ledger

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestSeenAfterRecordAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := Key{Sender: "SENDER1", Recipient: "RECEIVER1", ControlRef: "REF0001"}
	if seen, err := s.Seen(k); err != nil || seen {
		t.Fatalf("fresh store: seen=%v err=%v", seen, err)
	}
	if err := s.Record(k); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if seen, err := s.Seen(k); err != nil || !seen {
		t.Fatalf("after reopen: seen=%v err=%v", seen, err)
	}
	for _, other := range []Key{
		{Sender: "SENDER1", Recipient: "RECEIVER1", ControlRef: "REF0002"},
		{Sender: "SENDER2", Recipient: "RECEIVER1", ControlRef: "REF0001"},
		{Sender: "SENDER1", Recipient: "RECEIVER2", ControlRef: "REF0001"},
	} {
		if seen, _ := s.Seen(other); seen {
			t.Fatalf("%v seen but never recorded", other)
		}
	}
}

// Fields are length-prefixed: moving characters between fields makes
// another key.
func TestKeysDoNotCollide(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "l.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Record(Key{Sender: "AB", Recipient: "C", ControlRef: "1"}); err != nil {
		t.Fatal(err)
	}
	if seen, _ := s.Seen(Key{Sender: "A", Recipient: "BC", ControlRef: "1"}); seen {
		t.Fatal("keys with shifted fields collide")
	}
}

func TestTTLAndPurge(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, err := Open(filepath.Join(t.TempDir(), "l.db"), &Options{TTL: time.Hour, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := Key{Sender: "S", Recipient: "R", ControlRef: "OLD"}
	if err := s.Record(old); err != nil {
		t.Fatal(err)
	}
	c.Add(40 * time.Minute)
	fresh := Key{Sender: "S", Recipient: "R", ControlRef: "NEW"}
	if err := s.Record(fresh); err != nil {
		t.Fatal(err)
	}
	c.Add(30 * time.Minute) // old is 70 min old, fresh 30
	if seen, _ := s.Seen(old); seen {
		t.Fatal("expired entry still seen")
	}
	if at, _ := s.Recorded(fresh); at.IsZero() {
		t.Fatal("fresh entry not recorded")
	}
	n, err := s.Purge()
	if err != nil || n != 1 {
		t.Fatalf("purge: n=%d err=%v", n, err)
	}
	if l, _ := s.Len(); l != 1 {
		t.Fatalf("after purge: %d entries", l)
	}
	if seen, _ := s.Seen(fresh); !seen {
		t.Fatal("purge removed a live entry")
	}
}

func TestConcurrentRecord(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "l.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Record(Key{Sender: "S", Recipient: "R", ControlRef: string(rune('A' + i))})
		}()
	}
	wg.Wait()
	if l, _ := s.Len(); l != 16 {
		t.Fatalf("%d entries, want 16", l)
	}
}

func TestOptionsValidate(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "l.db"), &Options{TTL: time.Second}); err == nil {
		t.Fatal("a one-second TTL was accepted")
	}
}

// One partner's control reference does not pre-empt another's; an entry
// written before keys had a partner still matches every partner.
func TestPartnerIsolationAndLegacyEntries(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "l.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := Key{Partner: "acme", Sender: "S", Recipient: "R", ControlRef: "1"}
	b := a
	b.Partner = "globex"
	if err := s.Record(a); err != nil {
		t.Fatal(err)
	}
	if seen, _ := s.Seen(b); seen {
		t.Fatal("another partner's interchange seen")
	}
	old := Key{Sender: "S", Recipient: "R", ControlRef: "OLD"}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).Put(old.legacyBytes(), encodeTime(time.Now()))
	}); err != nil {
		t.Fatal(err)
	}
	old.Partner = "globex"
	if seen, err := s.Seen(old); err != nil || !seen {
		t.Fatalf("legacy entry: seen=%v err=%v", seen, err)
	}
	if at, _ := s.Recorded(old); at.IsZero() {
		t.Fatal("legacy entry has no time")
	}
}

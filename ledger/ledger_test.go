package ledger

import (
	"bytes"
	"encoding/binary"
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

// Keys with shifted fields encode apart (each field is length-prefixed),
// in the file of before as in the bucket.
func TestKeysDoNotCollide(t *testing.T) {
	a, b := Key{Sender: "AB", Recipient: "C", ControlRef: "1"}, Key{Sender: "A", Recipient: "BC", ControlRef: "1"}
	if bytes.Equal(a.bytes(), b.bytes()) || bytes.Equal(a.legacyBytes(), b.legacyBytes()) || kvKey(a.bytes()) == kvKey(b.bytes()) {
		t.Fatal("keys with shifted fields collide")
	}
}

// writeBoltLedger writes a ledger.db as hubs before the KV ledger did:
// raw keys to the time recorded.
func writeBoltLedger(t *testing.T, path string, entries map[string]time.Time) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		for k, at := range entries {
			if err := b.Put([]byte(k), binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano()))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

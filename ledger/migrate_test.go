package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func TestMigrateBolt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	now := time.Now()
	expired := Key{Partner: "p", Sender: "S", Recipient: "R", ControlRef: "EXPIRED"}
	keyed := Key{Partner: "p", Sender: "S", Recipient: "R", ControlRef: "KEYED"}
	legacy := Key{Sender: "S", Recipient: "R", ControlRef: "LEGACY"} // written before partners
	writeBoltLedger(t, path, map[string]time.Time{
		string(expired.bytes()):      now.Add(-90 * time.Minute), // past the hour
		string(keyed.bytes()):        now.Add(-30 * time.Minute),
		string(legacy.legacyBytes()): now.Add(-10 * time.Minute),
	})

	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	kv := openKV(t, js, &KVOptions{TTL: time.Hour})
	n, err := MigrateBolt(path, kv)
	if err != nil || n != 2 {
		t.Fatalf("migrated %d (err %v), want 2", n, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s still there: %v", path, err)
	}
	if _, err := os.Stat(path + ".migrated"); err != nil {
		t.Fatal(err)
	}
	mustSeen(t, kv, keyed, true)
	mustSeen(t, kv, expired, false)
	for _, partner := range []string{"p", "q", ""} {
		k := legacy
		k.Partner = partner
		mustSeen(t, kv, k, true) // a legacy entry matches every partner
	}
	if at, _ := kv.Recorded(keyed); !at.Equal(now.Add(-30 * time.Minute)) {
		t.Fatalf("migrated entry recorded at %v, want its original time", at)
	}
	// the remaining TTL, not a new full one
	stream, err := kv.js.Stream(context.Background(), "KV_"+kv.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := stream.GetLastMsgForSubject(context.Background(), kv.pre+kvKey(keyed.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if ttl := raw.Header.Get("Nats-TTL"); ttl != "1800" && ttl != "1801" {
		t.Fatalf("migrated entry's ttl %q, want the remaining 30 min", ttl)
	}

	// another hub opening the bucket knows of the legacy entries
	other := openKV(t, js, &KVOptions{TTL: time.Hour})
	mustSeen(t, other, Key{Partner: "z", Sender: "S", Recipient: "R", ControlRef: "LEGACY"}, true)

	// the second start migrates nothing
	if n, err := MigrateBolt(path, kv); err != nil || n != 0 {
		t.Fatalf("second migration: %d %v", n, err)
	}
}

// An entry a hub recorded in the bucket after the file's is kept.
func TestMigrateKeepsNewerBucketEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	now := time.Now()
	k := Key{Partner: "p", Sender: "S", Recipient: "R", ControlRef: "BOTH"}
	writeBoltLedger(t, path, map[string]time.Time{string(k.bytes()): now.Add(-20 * time.Minute)})
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	kv := openKV(t, js, &KVOptions{TTL: time.Hour})
	if err := kv.Record(k); err != nil {
		t.Fatal(err)
	}
	before, _ := kv.Recorded(k)
	if n, err := MigrateBolt(path, kv); err != nil || n != 1 {
		t.Fatalf("migrated %d (err %v)", n, err)
	}
	if after, _ := kv.Recorded(k); !after.Equal(before) {
		t.Fatalf("recorded %v after migration, want the bucket's %v", after, before)
	}
	if l, _ := kv.Len(); l != 1 {
		t.Fatalf("%d entries, want 1 (no legacy flag)", l)
	}
}

package jetstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// A batch is stored whole with each message's own dedupe id; a batch
// holding an id stored before is refused whole (AtomicDuplicate); a stream
// without AllowAtomicPublish refuses it (AtomicUnavailable); the headers
// handed in are not changed.
func TestPublishAtomic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j := connect(t, runServer(t, t.TempDir()))
	if _, err := EnsureStream(ctx, j, js.StreamConfig{Name: "B", Subjects: []string{"b.>"}, Storage: js.FileStorage,
		Duplicates: time.Minute, AllowAtomicPublish: true}); err != nil {
		t.Fatal(err)
	}
	shared := nats.Header{"X-Shared": []string{"1"}}
	msgs := func(from, n int) []*nats.Msg {
		var out []*nats.Msg
		for i := from; i < from+n; i++ {
			out = append(out, &nats.Msg{Subject: "b.x", Header: shared, Data: []byte(fmt.Sprint(i))})
		}
		return out
	}
	idOf := func(from int) func(int) string { return func(i int) string { return fmt.Sprint("id-", from+i) } }
	if err := PublishAtomic(ctx, j.Conn(), msgs(0, 5), idOf(0)); err != nil {
		t.Fatal(err)
	}
	if len(shared) != 1 {
		t.Fatalf("the shared header was changed: %v", shared)
	}
	s, _ := j.Stream(ctx, "B")
	for seq := uint64(1); seq <= 5; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil || string(m.Data) != fmt.Sprint(seq-1) || m.Header.Get(js.MsgIDHeader) != fmt.Sprint("id-", seq-1) {
			t.Fatalf("seq %d: %v %v", seq, m, err)
		}
	}
	// ids 3..7: 3 and 4 are stored, so nothing of it is
	err := PublishAtomic(ctx, j.Conn(), msgs(3, 5), idOf(3))
	if !AtomicDuplicate(err) {
		t.Fatalf("want a duplicate refusal, got %v", err)
	}
	if info, _ := s.Info(ctx); info.State.Msgs != 5 {
		t.Fatalf("a refused batch stored something: %d messages", info.State.Msgs)
	}
	if _, err := EnsureStream(ctx, j, js.StreamConfig{Name: "C", Subjects: []string{"c.>"}, Storage: js.FileStorage}); err != nil {
		t.Fatal(err)
	}
	off := []*nats.Msg{{Subject: "c.x", Data: []byte("a")}, {Subject: "c.x", Data: []byte("b")}}
	if err := PublishAtomic(ctx, j.Conn(), off, idOf(0)); !AtomicUnavailable(err) {
		t.Fatalf("want atomic publish unavailable, got %v", err)
	}
	if err := PublishAtomic(ctx, j.Conn(), make([]*nats.Msg, MaxAtomicBatch+1), idOf(0)); err == nil {
		t.Fatal("a batch above the server's limit was sent")
	}
}

func TestAtomicServer(t *testing.T) {
	for v, want := range map[string]bool{"2.15.2": true, "2.12.0": true, "v2.12.1": true, "2.11.9": false, "3.0.0": true, "": false, "x.y": false} {
		if got := AtomicServer(v); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}

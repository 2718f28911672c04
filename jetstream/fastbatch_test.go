package jetstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// What the hub's group settle relies on, against a real server: a fast
// batch is stored whole, each message with its own dedupe id; one stored
// before is skipped, the first one too; a message the server refuses ends
// the batch there, and what is stored is the part before it (ErrFastPrefix),
// never a message after it; a stream without allow_batched refuses it
// (FastUnavailable); the headers handed in are not changed.
func TestFastBatcher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j := connect(t, runServer(t, t.TempDir()))
	if _, err := EnsureStream(ctx, j, js.StreamConfig{Name: "B", Subjects: []string{"b.>"}, Storage: js.FileStorage,
		Duplicates: time.Minute, AllowBatchPublish: true}); err != nil {
		t.Fatal(err)
	}
	f, err := NewFastBatcher(j.Conn())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	shared := nats.Header{"X-Shared": []string{"1"}}
	msgs := func(from, n int) []*nats.Msg {
		var out []*nats.Msg
		for i := from; i < from+n; i++ {
			out = append(out, &nats.Msg{Subject: "b.x", Header: shared, Data: []byte(fmt.Sprint(i))})
		}
		return out
	}
	idOf := func(from int) func(int) string { return func(i int) string { return fmt.Sprint("id-", from+i) } }
	s, _ := j.Stream(ctx, "B")
	stored := func() []string {
		t.Helper()
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			if m.Header.Get(js.MsgIDHeader) != "id-"+string(m.Data) {
				t.Fatalf("seq %d: %s with id %q", seq, m.Data, m.Header.Get(js.MsgIDHeader))
			}
			out = append(out, string(m.Data))
		}
		return out
	}
	if err := f.Publish(ctx, msgs(0, 5), idOf(0)); err != nil {
		t.Fatal(err)
	}
	if len(shared) != 1 {
		t.Fatalf("the shared header was changed: %v", shared)
	}
	// 3 and 4 are stored: skipped, 5..7 stored after them; then 8 and 9
	// behind a stored first one (8 is published alone before)
	if err := f.Publish(ctx, msgs(3, 5), idOf(3)); err != nil {
		t.Fatalf("a batch with ids stored before: %v", err)
	}
	if err := f.Publish(ctx, msgs(8, 1), idOf(8)); err != nil {
		t.Fatal(err)
	}
	if err := f.Publish(ctx, msgs(8, 2), idOf(8)); err != nil {
		t.Fatalf("a batch whose first id is stored: %v", err)
	}
	if got := fmt.Sprint(stored()); got != "[0 1 2 3 4 5 6 7 8 9]" {
		t.Fatalf("stored %s", got)
	}
	// the third of 10..13 is refused (it expects another stream): 10 and 11
	// are stored, 12 and 13 are not
	bad := msgs(10, 4)
	bad[2] = &nats.Msg{Subject: "b.x", Header: nats.Header{js.ExpectedStreamHeader: []string{"OTHER"}}, Data: []byte("12")}
	if err := f.Publish(ctx, bad, idOf(10)); !errors.Is(err, ErrFastPrefix) {
		t.Fatalf("want a first part stored, got %v", err)
	}
	if got := fmt.Sprint(stored()); got != "[0 1 2 3 4 5 6 7 8 9 10 11]" {
		t.Fatalf("stored %s after a batch refused at its third message", got)
	}
	if _, err := EnsureStream(ctx, j, js.StreamConfig{Name: "C", Subjects: []string{"c.>"}, Storage: js.FileStorage}); err != nil {
		t.Fatal(err)
	}
	off := []*nats.Msg{{Subject: "c.x", Data: []byte("a")}, {Subject: "c.x", Data: []byte("b")}}
	if err := f.Publish(ctx, off, idOf(0)); !FastUnavailable(err) {
		t.Fatalf("want fast batches unavailable, got %v", err)
	}
	if err := f.Publish(ctx, make([]*nats.Msg, MaxAtomicBatch+1), idOf(0)); err == nil {
		t.Fatal("a batch above the limit was sent")
	}
}

func TestServerAtLeast(t *testing.T) {
	for v, want := range map[string]bool{"2.15.2": true, "v2.14.0": true, "2.14.0-RC.1": true, "2.13.9": false, "3.0.0": true, "": false, "x": false} {
		if got := FastServer(v); got != want {
			t.Errorf("FastServer(%q) = %v", v, got)
		}
	}
}

package alert

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

type recordingSink struct {
	mu  sync.Mutex
	got []Alert
}

func (r *recordingSink) Name() string { return "rec" }
func (r *recordingSink) Send(_ context.Context, a Alert) error {
	r.mu.Lock()
	r.got = append(r.got, a)
	r.mu.Unlock()
	return nil
}

func TestAlerterRateLimitAndDigest(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sink := &recordingSink{}
	a := New(time.Minute, []Sink{sink}, zerolog.Nop(), func() time.Time { return now })
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		a.Fire(ctx, Alert{Name: "PoisonMessageDetected", Partner: "ACME", Summary: "x"})
		now = now.Add(100 * time.Millisecond)
	}
	a.Fire(ctx, Alert{Name: "PoisonMessageDetected", Partner: "GLOBEX"}) // other partner: own budget
	a.Flush(ctx)                                                         // 10 s in: too early for a digest
	if len(sink.got) != 2 {
		t.Fatalf("%d alerts before the interval, want 2 (one per partner)", len(sink.got))
	}
	now = now.Add(time.Minute)
	a.Flush(ctx)
	if len(sink.got) != 3 || sink.got[2].Suppressed != 99 || sink.got[2].Partner != "ACME" {
		t.Fatalf("digest: %+v", sink.got)
	}
	a.Flush(ctx) // nothing more to say
	if len(sink.got) != 3 {
		t.Fatalf("extra digest: %d", len(sink.got))
	}
}

package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// fakeClock is the injectable clock of bulk replays: Sleep advances it and
// records what was asked, so rate limits are checked without waiting.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.sleeps = append(c.sleeps, d)
}

func (c *fakeClock) slept() (n int, total time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.sleeps {
		total += d
	}
	return len(c.sleeps), total
}

// opsEnv is a real hub with the parse stage (and a ledger) and a validate
// stage that fails with a business error while failValidate is set, plus
// Ops on the same server.
type opsEnv struct {
	*testEnv
	ops          *Ops
	clock        *fakeClock
	ledger       *mapLedger
	failValidate *atomic.Bool
}

func newOpsEnv(t *testing.T) *opsEnv {
	t.Helper()
	l := &mapLedger{seen: map[LedgerKey]bool{}}
	fail := &atomic.Bool{}
	validate := Stage{Name: "validate", Handle: func(ctx context.Context, m *Message) error {
		if fail.Load() {
			return PermanentError(CauseBusiness, errors.New("unknown article 4711"))
		}
		return nil
	}}
	env := startHub(t, runServer(t), "", fastConfig(), []Stage{ParseStage(EDIFACTConfig{}, l), validate}, nil)
	clock := &fakeClock{t: time.Now()}
	ops, err := NewOps(OpsOptions{JS: env.js, Auditor: NewAuditor(env.js, "AUDIT"), Actor: "alice",
		Now: clock.Now, Sleep: clock.Sleep, Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	return &opsEnv{testEnv: env, ops: ops, clock: clock, ledger: l, failValidate: fail}
}

// invoice is a valid interchange with its own control reference.
func invoice(ref string) string {
	return "UNA:+.? 'UNB+UNOC:3+SENDER1:14+RECEIVER1:14+261130:1200+" + ref + "'" +
		"UNH+1+INVOIC:D:96A:UN'BGM+380+" + ref + "+9'UNT+3+1'UNZ+1+" + ref + "'"
}

// deadLetters publishes payloads for partner and waits until the DLQ
// holds want messages in all.
func (e *opsEnv) deadLetters(t *testing.T, partner string, want int, payloads ...string) {
	t.Helper()
	for _, p := range payloads {
		publish(t, e.js, partner, p, nil)
	}
	eventually(t, 10*time.Second, func() bool { return countMsgs(t, e.js, "DLQ") == want })
}

type streamState struct{ msgs, last uint64 }

func (e *opsEnv) state(t *testing.T, names ...string) map[string]streamState {
	t.Helper()
	out := map[string]streamState{}
	for _, n := range names {
		s, err := e.js.Stream(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out[n] = streamState{info.State.Msgs, info.State.LastSeq}
	}
	return out
}

// auditActions lists the actions of the AUDIT stream in order.
func auditActions(t *testing.T, j js.JetStream) []string {
	t.Helper()
	recs, err := ReadAudit(context.Background(), j, "AUDIT", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s:%s", r.Event.Actor, r.Event.Action))
	}
	return out
}

func lastAudit(t *testing.T, j js.JetStream) AuditEvent {
	t.Helper()
	recs, err := ReadAudit(context.Background(), j, "AUDIT", time.Time{}, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("read audit: %v (%d)", err, len(recs))
	}
	return recs[0].Event
}

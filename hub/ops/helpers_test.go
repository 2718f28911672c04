package ops

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/wire"
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
	*hubtest.Env
	ops          *Ops
	clock        *fakeClock
	ledger       *ledger.KVStore
	failValidate *atomic.Bool
}

func newOpsEnv(t *testing.T) *opsEnv {
	t.Helper()
	env, l, fail := runValidatingHub(t, nil)
	clock := &fakeClock{t: time.Now()}
	ops, err := NewOps(OpsOptions{JS: env.JS, Auditor: audit.New(env.JS, "AUDIT"), Actor: "alice", Grants: l,
		Now: clock.Now, Sleep: clock.Sleep, Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	return &opsEnv{Env: env, ops: ops, clock: clock, ledger: l, failValidate: fail}
}

// runValidatingHub runs a hub on a new server: parse, with a ledger, then
// a validate stage that refuses every message as a business error while
// fail is set; keys signs its copies (nil: none).
func runValidatingHub(t *testing.T, keys *audit.Keyring) (env *hubtest.Env, l *ledger.KVStore, fail *atomic.Bool) {
	t.Helper()
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	l, err := ledger.OpenKV(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	fail = &atomic.Bool{}
	validate := hub.Stage{Name: "validate", Handle: func(ctx context.Context, m *hub.Message) error {
		if fail.Load() {
			return hub.PermanentError(wire.CauseBusiness, errors.New("unknown article 4711"))
		}
		return nil
	}}
	cfg := hubtest.FastConfig()
	env = hubtest.Run(t, &hubtest.Options{URL: srv.URL, Config: &cfg, Keyring: keys, Stages: []hub.Stage{parse.Stage(parse.Config{}, l), validate}})
	return env, l, fail
}

// deadLetters publishes payloads for partner and waits until the DLQ
// holds want messages in all.
func (e *opsEnv) deadLetters(t *testing.T, partner string, want int, payloads ...string) {
	t.Helper()
	for _, p := range payloads {
		jetstreamtest.PublishIngest(t, e.JS, partner, p, nil)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "DLQ") == want })
}

// auditActions lists the actions of the AUDIT stream in order.
func auditActions(t *testing.T, j js.JetStream) []string {
	t.Helper()
	recs, err := audit.Read(context.Background(), j, "AUDIT", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s:%s", r.Event.Actor, r.Event.Action))
	}
	return out
}

func lastAudit(t *testing.T, j js.JetStream) audit.Event {
	t.Helper()
	recs, err := audit.Read(context.Background(), j, "AUDIT", time.Time{}, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("read audit: %v (%d)", err, len(recs))
	}
	return recs[0].Event
}

// keyedOps runs a hub with an audit key and returns it with the keyed
// auditor and the runbook acting as alice through it.
func keyedOps(t *testing.T) (*hubtest.Env, *audit.Auditor, *Ops) {
	t.Helper()
	keys, err := audit.NewKeyring([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := hubtest.FastConfig()
	env := hubtest.Run(t, &hubtest.Options{Config: &cfg, Keyring: keys})
	auditor := audit.New(env.JS, "AUDIT", audit.WithKeyring(keys))
	o, err := NewOps(OpsOptions{JS: env.JS, Auditor: auditor, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	return env, auditor, o
}

package api

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// opsEnv is a real hub with the parse stage and the runbook on its server.
type opsEnv struct {
	*hubtest.Env
	ops *ops.Ops
}

func newOpsEnv(t *testing.T) *opsEnv {
	t.Helper()
	cfg := hubtest.FastConfig()
	env := hubtest.Run(t, &hubtest.Options{Config: &cfg})
	o, err := ops.NewOps(ops.OpsOptions{JS: env.JS, Auditor: audit.New(env.JS, "AUDIT"), Actor: "alice",
		Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	return &opsEnv{Env: env, ops: o}
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

func lastAudit(t *testing.T, j js.JetStream) audit.Event {
	t.Helper()
	recs, err := audit.Read(context.Background(), j, "AUDIT", time.Time{}, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("read audit: %v (%d)", err, len(recs))
	}
	return recs[0].Event
}

// deadLettersWith publishes one payload with headers and waits for its
// dead letter.
func (e *opsEnv) deadLettersWith(t *testing.T, partner string, hdr nats.Header, payload string) {
	t.Helper()
	before := jetstreamtest.CountMsgs(t, e.JS, "DLQ")
	jetstreamtest.PublishIngest(t, e.JS, partner, payload, hdr)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "DLQ") == before+1 })
}

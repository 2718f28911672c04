package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
	js "github.com/nats-io/nats.go/jetstream"
)

// Each cause lands in its subject with its headers, at once: permanent
// failures are not retried.
func TestEachCauseLandsInItsDLQ(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		mu.Lock()
		calls[string(m.Data)]++
		mu.Unlock()
		return PermanentError(string(m.Data), fmt.Errorf("bad %s at segment 3", m.Data))
	}}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", fastConfig(), []Stage{stage}, nil)
	for _, c := range wire.Causes {
		jetstreamtest.PublishIngest(t, env.js, "ACME", c, nil)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "DLQ") == len(wire.Causes) })
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "DLQ") {
		cause := string(m.Data)
		if m.Subject != "edi.parse.dlq."+cause {
			t.Errorf("%s landed in %s", cause, m.Subject)
		}
		for k, v := range map[string]string{wire.HdrErrorCause: cause, wire.HdrErrorClass: "permanent", wire.HdrAttempts: "1",
			wire.HdrOriginalTopic: "edi.ingest.ACME", wire.HdrPartnerID: "ACME", wire.HdrErrorMsg: "bad " + cause + " at segment 3", wire.HdrStage: "parse"} {
			if got := m.Header.Get(k); got != v {
				t.Errorf("%s: header %s = %q, want %q", cause, k, got, v)
			}
		}
		if ttl := m.Header.Get("Nats-TTL"); ttl == "" {
			t.Errorf("%s: no per-message TTL", cause)
		}
		if calls[cause] != 1 {
			t.Errorf("%s: handler ran %d times, want 1 (no retries for permanent causes)", cause, calls[cause])
		}
	}
	if n := jetstreamtest.CountMsgs(t, env.js, "POISON"); n != 0 {
		t.Fatalf("catalogued failures leaked into POISON: %d", n)
	}
}

// Tiered mode: a transient failure that heals at tier 2 ends in PARSED
// exactly once; the partition went on meanwhile; tiers are honoured.
func TestTieredRetryHealsAtTier2(t *testing.T) {
	var mu sync.Mutex
	var attemptsAt []time.Time
	stage := echoStage("parse", func(m *Message) error {
		if string(m.Data) != "flaky" {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		attemptsAt = append(attemptsAt, time.Now())
		if len(attemptsAt) <= 2 { // first try and tier 1 fail; tier 2 heals
			return TransientError("", errors.New("partner endpoint unavailable"))
		}
		return nil
	})
	cfg := fastConfig()
	cfg.Retry.Mode = ModeTiered
	cfg.Retry.Tiers = []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "flaky", nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "behind", nil)
	jetstreamtest.Eventually(t, 3*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1 })
	if m := jetstreamtest.StreamMsgs(t, env.js, "PARSED")[0]; string(m.Data) != "behind" {
		t.Fatalf("the partition did not move on: %q", m.Data)
	}
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 2 })
	jetstreamtest.Settle(t, env.js, 10*time.Second, "INGEST", "RETRY", "PARSED") // a duplicate would be stored by now
	var flaky int
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "PARSED") {
		if string(m.Data) == "flaky" {
			flaky++
		}
	}
	if flaky != 1 {
		t.Fatalf("flaky in PARSED %d times, want exactly once", flaky)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(attemptsAt) != 3 {
		t.Fatalf("%d attempts, want 3", len(attemptsAt))
	}
	if d := attemptsAt[1].Sub(attemptsAt[0]); d < cfg.Retry.Tiers[0] {
		t.Fatalf("tier 1 came after %v, before its %v", d, cfg.Retry.Tiers[0])
	}
	if d := attemptsAt[2].Sub(attemptsAt[1]); d < cfg.Retry.Tiers[1] {
		t.Fatalf("tier 2 came after %v, before its %v", d, cfg.Retry.Tiers[1])
	}
	if n := jetstreamtest.CountMsgs(t, env.js, "RETRY"); n != 0 {
		t.Fatalf("RETRY still holds %d messages", n)
	}
}

// Exhaustion ends in the DLQ of the last cause, with the hop headers.
func TestTieredExhaustionGoesToLastCause(t *testing.T) {
	var mu sync.Mutex
	n := 0
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n < 3 {
			return TransientError("", errors.New("timeout talking to partner"))
		}
		return TransientError(wire.CausePartnerRejected, errors.New("partner said 503 again"))
	}}
	cfg := fastConfig()
	cfg.Retry.Mode = ModeTiered
	cfg.Retry.Tiers = []time.Duration{time.Second, time.Second}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "doomed", nil)
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 1 })
	m := jetstreamtest.StreamMsgs(t, env.js, "DLQ")[0]
	if m.Subject != "edi.parse.dlq.partner-rejected" || string(m.Data) != "doomed" {
		t.Fatalf("exhausted into %s", m.Subject)
	}
	for k, v := range map[string]string{wire.HdrErrorClass: "exhausted", wire.HdrRetryCount: "2", wire.HdrOriginalStream: "INGEST",
		wire.HdrOriginalSeq: "1", wire.HdrOriginalTopic: "edi.ingest.ACME", wire.HdrErrorMsg: "partner said 503 again"} {
		if got := m.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if m.Header.Get(wire.HdrFirstFailedAt) == "" {
		t.Error("x-first-failed-at lost across hops")
	}
	mu.Lock()
	if n != 3 {
		t.Errorf("%d attempts, want 3 (first + 2 tiers)", n)
	}
	mu.Unlock()
}

// Strict mode keeps order and retries in place up to max_attempts, then
// dead-letters with the last cause.
func TestStrictTransientExhaustion(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	stage := echoStage("parse", func(m *Message) error {
		mu.Lock()
		seen = append(seen, string(m.Data))
		mu.Unlock()
		if string(m.Data) == "down" {
			return TransientError(wire.CauseBusiness, errors.New("ERP down"))
		}
		return nil
	})
	cfg := fastConfig()
	cfg.Retry.MaxAttempts = 4
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "down", nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "after", nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 1 && jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1
	})
	mu.Lock()
	defer mu.Unlock()
	// "after" may run ahead of "down"'s first attempt (hub.partner_pipeline);
	// that run is discarded when "down" is retried in place, and it runs
	// again once "down" is settled: its last run is after all of "down"'s
	var settled []string
	early := 0
	for i, s := range seen {
		if s == "after" && i < len(seen)-1 {
			early++
			continue
		}
		settled = append(settled, s)
	}
	want := []string{"down", "down", "down", "down", "after"}
	if !equal(settled, want) {
		t.Fatalf("order %v, want %v after the runs ahead", seen, want)
	}
	if got := testCounter(t, env, "edihub_partner_pipeline_discarded_total"); got != float64(early) {
		t.Errorf("%d runs of after before down's last, %v discarded", early, got)
	}
	if m := jetstreamtest.StreamMsgs(t, env.js, "DLQ")[0]; m.Subject != "edi.parse.dlq.business" || m.Header.Get(wire.HdrAttempts) != "4" {
		t.Fatalf("%s attempts %s", m.Subject, m.Header.Get(wire.HdrAttempts))
	}
}

// Retention settings are applied to the streams, and changed on restart.
func TestRetentionAppliedToStreams(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	cfg := fastConfig()
	cfg.DLQ.Retention = map[string]time.Duration{wire.CauseBusiness: 10 * 365 * 24 * time.Hour, wire.CauseSchema: 48 * time.Hour}
	cfg.DLQ.MaxBytes = 64 << 20
	env := startHub(t, url, "", cfg, []Stage{echoStage("parse", nil)}, nil)
	info := streamInfo(t, env.js, "DLQ")
	if info.Config.MaxAge != 10*365*24*time.Hour || info.Config.MaxBytes != 64<<20 || info.Config.Discard != js.DiscardNew || !info.Config.AllowMsgTTL {
		t.Fatalf("DLQ config: maxage %v maxbytes %d discard %v ttl %v", info.Config.MaxAge, info.Config.MaxBytes, info.Config.Discard, info.Config.AllowMsgTTL)
	}
	if p := streamInfo(t, env.js, "PARKING"); p.Config.MaxAge != 0 {
		t.Fatalf("PARKING must keep messages until a person decides: MaxAge %v", p.Config.MaxAge)
	}
	if a := streamInfo(t, env.js, "AUDIT"); !a.Config.DenyDelete || !a.Config.DenyPurge {
		t.Fatalf("AUDIT allows delete or purge")
	}
	env.stop()
	cfg.DLQ.MaxBytes = 128 << 20
	env2 := startHub(t, url, "", cfg, []Stage{echoStage("parse", nil)}, nil)
	if got := streamInfo(t, env2.js, "DLQ").Config.MaxBytes; got != 128<<20 {
		t.Fatalf("changed max_bytes not applied on restart: %d", got)
	}
	// the schema retention reaches the message as its TTL
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		return PermanentError(wire.CauseSchema, errors.New("x"))
	}}
	env2.stop()
	env3 := startHub(t, url, "", cfg, []Stage{stage}, nil)
	jetstreamtest.PublishIngest(t, env3.js, "ACME", "x", nil)
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env3.js, "DLQ") == 1 })
	if ttl := jetstreamtest.StreamMsgs(t, env3.js, "DLQ")[0].Header.Get("Nats-TTL"); ttl != (48 * time.Hour).String() {
		t.Fatalf("Nats-TTL %q, want %s", ttl, 48*time.Hour)
	}
}

func streamInfo(t *testing.T, j js.JetStream, name string) *js.StreamInfo {
	t.Helper()
	s, err := j.Stream(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

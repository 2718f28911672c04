package hub

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// TestUnavailableServiceIsNotTheMessagesFault: a stage whose ledger does
// not answer (a leader election) for more attempts than both the retry
// limit and the poison threshold allow leaves the message waiting, not
// dead-lettered or quarantined; it is parsed once the service answers,
// and a neighbour in another partition is not held up meanwhile.
func TestUnavailableServiceIsNotTheMessagesFault(t *testing.T) {
	cfg := fastConfig()
	cfg.Retry.MaxAttempts = 2
	outages := cfg.Attempts.Threshold + cfg.Retry.MaxAttempts + 1
	var calls atomic.Int32
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		if m.Partner == "ACME" && int(calls.Add(1)) <= outages {
			return &UnavailableError{Err: errors.New("interchange ledger: context deadline exceeded")}
		}
		m.Emit(wire.ParsedSubject(m.Partner, "INVOIC"), nats.Header{}, m.Data)
		return nil
	}}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "UNB+a'", nil)
	jetstreamtest.PublishIngest(t, env.js, "GLOBEX", "UNB+b'", nil)
	jetstreamtest.Eventually(t, 60*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 2
	}, "both parsed once the ledger answers")
	if got := int(calls.Load()); got < outages+1 {
		t.Fatalf("ACME was tried %d times, want more than %d", got, outages)
	}
	if first := jetstreamtest.StreamMsgs(t, env.js, "PARSED")[0]; first.Subject != wire.ParsedSubject("GLOBEX", "INVOIC") {
		t.Errorf("first parsed %s: the waiting partition held up the other", first.Subject)
	}
	for _, s := range []string{"DLQ", "POISON"} {
		if n := jetstreamtest.CountMsgs(t, env.js, s); n != 0 {
			t.Errorf("%s holds %d messages: an unavailable service was charged to the message", s, n)
		}
	}
}

// TestCommitOnSuccess: a write a stage queued with CommitOnSuccess starts
// only when every stage succeeded, is awaited with the outputs, and when
// it fails the message is delivered again (not acked, not dead-lettered);
// the outputs stored by the failed attempt are deduplicated.
func TestCommitOnSuccess(t *testing.T) {
	var started, failures atomic.Int32
	parse := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		m.Emit(wire.ParsedSubject(m.Partner, "INVOIC"), nats.Header{}, m.Data)
		m.CommitOnSuccess(func() func(context.Context) error {
			started.Add(1)
			return func(context.Context) error {
				if m.Partner == "ACME" && failures.Add(1) <= 2 {
					return errors.New("ledger commit: no leader")
				}
				return nil
			}
		})
		return nil
	}}
	validate := Stage{Name: "validate", Handle: func(ctx context.Context, m *Message) error {
		if m.Partner == "REFUSED" {
			return PermanentError(wire.CauseBusiness, errors.New("unknown article"))
		}
		return nil
	}}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", fastConfig(), []Stage{parse, validate}, nil)
	jetstreamtest.PublishIngest(t, env.js, "REFUSED", "UNB+r'", nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "UNB+a'", nil)
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1 && jetstreamtest.CountMsgs(t, env.js, "DLQ") == 1 && failures.Load() >= 3
	}, "ACME parsed once after two failed commits, REFUSED dead-lettered")
	if n := started.Load(); n != 3 {
		t.Errorf("%d commits started, want 3 (ACME's three attempts; none for the refused message)", n)
	}
	if n := jetstreamtest.CountMsgs(t, env.js, "PARSED"); n != 1 {
		t.Errorf("PARSED holds %d, want 1: the failed attempts' outputs are deduplicated", n)
	}
}

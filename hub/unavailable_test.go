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

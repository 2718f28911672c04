package hub

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A stage whose own store write is refused (a full disk, JetStream's
// store limit) for more attempts than the retry limit and the poison
// threshold allow: the message waits, is never dead-lettered or
// quarantined, and is parsed once the store takes writes again. The
// errors are the store's own, not wrapped in UnavailableError.
func TestStorageFaultIsNeverChargedToTheMessage(t *testing.T) {
	cfg := fastConfig()
	cfg.Retry.MaxAttempts = 2
	outages := cfg.Attempts.Threshold + cfg.Retry.MaxAttempts + 1
	faults := []error{
		fmt.Errorf("ledger put: %w", &js.APIError{Code: 500, ErrorCode: 10047, Description: "insufficient storage resources available"}),
		fmt.Errorf("write data/ledger: no space left on device"),
	}
	var calls atomic.Int32
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		if n := int(calls.Add(1)); n <= outages {
			return faults[n%len(faults)]
		}
		m.Emit(wire.ParsedSubject(m.Partner, "INVOIC"), nats.Header{}, m.Data)
		return nil
	}}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "UNB+a'", nil)
	jetstreamtest.Eventually(t, 60*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1
	}, "parsed once the store takes writes")
	if got := int(calls.Load()); got < outages+1 {
		t.Fatalf("tried %d times, want more than %d", got, outages)
	}
	for _, s := range []string{"DLQ", "POISON"} {
		if n := jetstreamtest.CountMsgs(t, env.js, s); n != 0 {
			t.Errorf("%s holds %d messages: a storage fault was charged to the message", s, n)
		}
	}
}

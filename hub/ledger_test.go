package hub

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
)

// mapLedger is an in-memory Ledger for the hub's own tests; the bbolt one
// is tested in package ledger.
type mapLedger struct {
	mu   sync.Mutex
	seen map[LedgerKey]bool
}

func (l *mapLedger) Seen(k LedgerKey) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[k], nil
}

func (l *mapLedger) Record(k LedgerKey) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[k] = true
	return nil
}

// A retransmitted interchange is acked without being processed twice,
// counted and audited; x-replay-force overrides.
func TestDuplicateInterchangeNotProcessedTwice(t *testing.T) {
	l := &mapLedger{seen: map[LedgerKey]bool{}}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", fastConfig(), []Stage{ParseStage(EDIFACTConfig{}, l)}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", twoInvoices, nil)
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 2 })
	// the ledger is written after the ack, once the outputs are stored
	jetstreamtest.Eventually(t, 5*time.Second, func() bool {
		ok, _ := l.Seen(LedgerKey{Sender: "SENDER1", Recipient: "RECEIVER1", ControlRef: "REF0001"})
		return ok
	})
	jetstreamtest.PublishIngest(t, env.js, "ACME", twoInvoices, nil) // the partner sends it again
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return testCounter(t, env, "edihub_pipeline_duplicate_interchanges_total") == 1 })
	if n := jetstreamtest.CountMsgs(t, env.js, "PARSED"); n != 2 {
		t.Fatalf("duplicate was processed: PARSED has %d", n)
	}
	var dupAudited bool
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "AUDIT") {
		dupAudited = dupAudited || contains(string(m.Data), `"action":"duplicate-skipped"`)
	}
	if !dupAudited {
		t.Fatal("duplicate not audited")
	}
	jetstreamtest.PublishIngest(t, env.js, "ACME", twoInvoices, nats.Header{wire.HdrReplayForce: {"true"}})
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 4 })
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

package parse_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/wire"
)

// A retransmitted interchange is acked without being processed twice,
// counted and audited; x-replay-force overrides.
func TestDuplicateInterchangeNotProcessedTwice(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	_, j := jetstreamtest.Connect(t, url)
	l, err := ledger.OpenKV(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := startParse(t, url, l)
	jetstreamtest.PublishIngest(t, env.JS, "ACME", twoInvoices, nil)
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "PARSED") == 2 })
	// the ledger record was stored with the outputs, before the ack
	if seen, err := l.Seen(parse.LedgerKey{Partner: "ACME", Sender: "SENDER1", Recipient: "RECEIVER1", ControlRef: "REF0001"}); err != nil || !seen {
		t.Fatalf("ledger after the outputs: %v %v", seen, err)
	}
	// another partner may use the same control reference
	jetstreamtest.PublishIngest(t, env.JS, "GLOBEX", twoInvoices, nil)
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "PARSED") == 4 })
	jetstreamtest.PublishIngest(t, env.JS, "ACME", twoInvoices, nil) // the partner sends it again
	jetstreamtest.Eventually(t, 5*time.Second, func() bool {
		return jetstreamtest.MetricSum(t, env.Registry, "edihub_pipeline_duplicate_interchanges_total") == 1
	})
	if n := jetstreamtest.CountMsgs(t, env.JS, "PARSED"); n != 4 {
		t.Fatalf("duplicate was processed: PARSED has %d", n)
	}
	var dupAudited bool
	for _, m := range jetstreamtest.StreamMsgs(t, env.JS, "AUDIT") {
		dupAudited = dupAudited || strings.Contains(string(m.Data), `"action":"duplicate-skipped"`)
	}
	if !dupAudited {
		t.Fatal("duplicate not audited")
	}
	// A producer's own x-replay-force is no bypass...
	forced := nats.Header{wire.HdrReplayForce: {"true"}, wire.HdrReplayedFrom: {"DLQ:99"}}
	jetstreamtest.PublishIngest(t, env.JS, "ACME", twoInvoices, forced)
	jetstreamtest.Eventually(t, 5*time.Second, func() bool {
		return jetstreamtest.MetricSum(t, env.Registry, "edihub_pipeline_duplicate_interchanges_total") == 2
	})
	// ...only a replay an operator forced, with its grant in the ledger.
	if err := l.Grant("DLQ:99", audit.PayloadHash([]byte(twoInvoices))); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.PublishIngest(t, env.JS, "ACME", twoInvoices, forced)
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "PARSED") == 6 })
}

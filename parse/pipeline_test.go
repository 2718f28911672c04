package parse_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/wire"
)

// A partner sends an interchange and at once again, then another one;
// pipelined four deep, the copy's stage runs while the original is not
// settled (its ledger records not stored yet: the copy's lookup cannot see
// them). At the copy's turn the ledger is asked again, and the copy is
// answered as a duplicate: no second output. The next interchange is
// parsed, after both.
//
// With group settles (hub.group_settle always) the copy never joins its
// original's group (it names the same records): the same outcome.
func TestPipelinedDuplicateRightAfterItsOriginalIsADuplicate(t *testing.T) {
	for _, groups := range []string{hub.GroupSettleAuto, hub.GroupSettleAlways} {
		t.Run("group_settle="+groups, func(t *testing.T) { pipelinedDuplicate(t, groups) })
	}
}

func pipelinedDuplicate(t *testing.T, groups string) {
	url := jetstreamtest.StartServer(t, nil).URL
	_, j := jetstreamtest.Connect(t, url)
	l, err := ledger.OpenKV(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := parse.Stage(parse.Config{}, l)
	copyStarted := make(chan struct{})
	inner := st.Handle
	st.Handle = func(ctx context.Context, m *hub.Message) error {
		switch m.Seq {
		case 2: // the copy
			close(copyStarted)
		case 1: // the original: returns once the copy's stage has started
			select {
			case <-copyStarted:
			case <-time.After(20 * time.Second):
				t.Error("the copy's stage did not start while the original was not settled: no pipeline")
			}
		}
		return inner(ctx, m)
	}
	cfg := hubtest.FastConfig()
	cfg.Partitions, cfg.PartitionConcurrency, cfg.PartnerPipeline, cfg.GroupSettle = 1, 8, 4, groups
	env := hubtest.Run(t, &hubtest.Options{URL: url, Config: &cfg, Stages: []hub.Stage{st}})
	next := strings.ReplaceAll(twoInvoices, "REF0001", "REF0002")
	jetstreamtest.PublishIngest(t, env.JS, "ACME", twoInvoices, nil)
	jetstreamtest.PublishIngest(t, env.JS, "ACME", twoInvoices, nil)
	jetstreamtest.PublishIngest(t, env.JS, "ACME", next, nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		return jetstreamtest.MetricSum(t, env.Registry, "edihub_pipeline_duplicate_interchanges_total") == 1 &&
			jetstreamtest.CountMsgs(t, env.JS, "PARSED") >= 4
	})
	var refs []string
	for _, m := range jetstreamtest.StreamMsgs(t, env.JS, "PARSED") {
		refs = append(refs, m.Header.Get(wire.HdrOriginalSeq))
	}
	if got := strings.Join(refs, ","); got != "1,1,3,3" {
		t.Fatalf("PARSED from INGEST messages %s, want 1,1,3,3 (the copy, 2, answered as a duplicate)", got)
	}
	if got := jetstreamtest.MetricSum(t, env.Registry, "edihub_partner_pipeline_rechecked_total"); got != 1 {
		t.Errorf("rechecked at the turn: %v, want 1", got)
	}
}

package app

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/ledger"
)

// A clean stop writes the ledger's index to its file in the data folder
// (the next start reads only what the bucket stored after it).
func TestCleanStopWritesTheLedgerIndexFile(t *testing.T) {
	c := testConfig(t)
	a, err := New(context.Background(), c, testEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	stop := running(t, a)
	_, j := jetstreamtest.Connect(t, a.NATSURL())
	jetstreamtest.Eventually(t, 20*time.Second, a.Hub().Ready, "not ready")
	jetstreamtest.PublishIngest(t, j, "ACME", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "CKP1"), nil)
	jetstreamtest.Eventually(t, 30*time.Second, func() bool { return a.Ledger().Indexed() == 1 }, "the interchange is in the ledger")
	stop()
	db, err := bolt.Open(filepath.Join(c.DataDir, ledgerIndexFile), 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("no ledger index file after a clean stop: %v", err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("marks")); b == nil || b.Stats().KeyN != 1 {
			t.Errorf("the index file does not hold the one interchange (marks bucket %v)", b)
		}
		return nil
	})
}

// The rebuild counter has a series for every reason from the start (an
// alert on a rise needs the zero), under one name.
func TestLedgerMetricsHaveEveryRebuildReason(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ls, err := ledger.OpenKV(context.Background(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	reg := prometheus.NewRegistry()
	registerLedgerMetrics(reg, ls)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "edihub_ledger_index_rebuilds_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && m.GetCounter().GetValue() == 0 {
					got[l.GetValue()] = true
				}
			}
		}
	}
	for _, r := range ledger.RebuildReasons {
		if !got[r] {
			t.Errorf("no edihub_ledger_index_rebuilds_total{reason=%q} at 0 (have %v)", r, got)
		}
	}
}

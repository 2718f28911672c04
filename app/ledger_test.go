package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// A clean stop saves the ledger's index to the data folder (the next start
// reads only what the bucket stored after it).
func TestCleanStopSavesTheLedgerCheckpoint(t *testing.T) {
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
	st, err := os.Stat(filepath.Join(c.DataDir, ledgerCheckpointFile))
	if err != nil || st.Size() == 0 {
		t.Fatalf("no ledger checkpoint after a clean stop: %v", err)
	}
}

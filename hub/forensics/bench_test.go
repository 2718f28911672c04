package forensics

import (
	"github.com/edihub/edihub/edifact/edifacttest"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// BenchmarkQuarantineToReport is the time from publishing a poison copy of
// a small interchange to its summary on edi.forensic.<partner>, which is
// published after report, payload and ticket are stored: the whole path
// with a real child (this test binary as `sandbox exec`).
func BenchmarkQuarantineToReport(b *testing.B) {
	srv := jetstreamtest.StartServer(b, &jetstreamtest.Options{DataDir: b.TempDir()})
	env := startForensics(b, srv.ClientURL(), Config{}, nil)
	provisionPoison(b, env.js)
	sub, err := env.nc.SubscribeSync("edi.forensic.BENCH")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		publishPoison(b, env.js, "parse", "BENCH", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "B"+time.Now().Format("150405.000000")), nil)
		if _, err := sub.NextMsg(30 * time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

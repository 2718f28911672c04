package forensics

import (
	"context"
	"encoding/json"
	"github.com/edihub/edihub/drill"
	"github.com/edihub/edihub/edifact/edifacttest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

// Real children for every outcome the worker must tell apart; each report
// comes with its payload, its ticket and a summary on edi.forensic.<partner>.
func TestForensicsOutcomesWithRealChildren(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	env := startForensics(t, url, fastForensicsConfig(), nil)
	provisionPoison(t, env.js)
	sums := make(chan *nats.Msg, 16)
	sub, err := env.nc.ChanSubscribe("edi.forensic.>", sums)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	broken := strings.Replace(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "BRK1"), "UNT+3+1", "UNT+7+1", 1)
	cases := []struct {
		name, stage, payload string
		hdr                  nats.Header
		want                 sandbox.Outcome
		check                func(t *testing.T, r *Report)
	}{
		{"valid interchange", "parse", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "FINE1"), nil, sandbox.OutcomeParsedFine, func(t *testing.T, r *Report) {
			if r.Sandbox.Result == nil || r.Sandbox.Result.Details["segments"] != "5" {
				t.Errorf("result %+v, want 5 segments read", r.Sandbox.Result)
			}
			if !strings.Contains(r.Verdict, "environmental") {
				t.Errorf("verdict %q", r.Verdict)
			}
		}},
		{"broken envelope", "parse", broken, nil, sandbox.OutcomeReproducedError, func(t *testing.T, r *Report) {
			if r.Sandbox.Cause != wire.CauseSchema || r.Sandbox.ErrorClass != string(hub.Permanent) || !strings.Contains(r.Sandbox.Error, "UNT") {
				t.Errorf("error %q class %q cause %q", r.Sandbox.Error, r.Sandbox.ErrorClass, r.Sandbox.Cause)
			}
			if r.Sandbox.Progress.Segment != 4 || r.Sandbox.Progress.Offset == 0 {
				t.Errorf("progress %+v, want the UNT (segment 4) with its offset", r.Sandbox.Progress)
			}
		}},
		{"drill panic", "parse", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "PANIC1"), nats.Header{wire.HdrDrill: {drill.Panic}, wire.HdrDrillMode: {"on"}, wire.HdrHubMAC: {signAsHub}}, sandbox.OutcomePanic, func(t *testing.T, r *Report) {
			if r.Sandbox.PanicValue != "drill: panic on purpose" || !strings.Contains(r.Sandbox.Stack, "drill.Reproduce") {
				t.Errorf("panic %q, stack:\n%s", r.Sandbox.PanicValue, r.Sandbox.Stack)
			}
		}},
		{"drill hang", "parse", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "HANG1"), nats.Header{wire.HdrDrill: {drill.Hang}, wire.HdrDrillMode: {"on"}, wire.HdrHubMAC: {signAsHub}}, sandbox.OutcomeCPUCap, func(t *testing.T, r *Report) {
			if !strings.Contains(r.Sandbox.Stack, "drill.Reproduce") {
				t.Errorf("the CPU-cap stack does not show where it spun:\n%.2000s", r.Sandbox.Stack)
			}
		}},
		// A copy an older hub stored (x-hub-mac v1) still has its drill
		// reproduced: v1 covers the drill headers.
		{"older hub's drill", "parse", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "PANIC2"), nats.Header{wire.HdrDrill: {drill.Panic}, wire.HdrDrillMode: {"on"}, wire.HdrHubMAC: {signAsOldHub}}, sandbox.OutcomePanic, func(t *testing.T, r *Report) {
			if r.Sandbox.PanicValue != "drill: panic on purpose" || r.HubMAC != "v1" {
				t.Errorf("panic %q, hub_mac %q (%s)", r.Sandbox.PanicValue, r.HubMAC, r.HubMACError)
			}
		}},
		{"spoofed drill header", "parse", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "SPOOF1"), nats.Header{wire.HdrDrill: {drill.Panic}}, sandbox.OutcomeParsedFine, func(t *testing.T, r *Report) {
			if r.Sandbox.PanicValue != "" {
				t.Errorf("a partner's own x-drill header made the sandbox panic: %q", r.Sandbox.PanicValue)
			}
		}},
		// Anyone who may publish on edi.poison.> can write x-drill-mode: on;
		// only the hub can sign it.
		{"partner's own drill mode", "parse", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "SPOOF2"), nats.Header{wire.HdrDrill: {drill.Panic}, wire.HdrDrillMode: {"on"}}, sandbox.OutcomeParsedFine, func(t *testing.T, r *Report) {
			if r.Sandbox.PanicValue != "" || !strings.Contains(strings.Join(r.Sandbox.Notes, " "), "x-drill-mode ignored") {
				t.Errorf("an unsigned x-drill-mode: on was honoured: panic %q, notes %q", r.Sandbox.PanicValue, r.Sandbox.Notes)
			}
		}},
		{"forged hub MAC", "parse", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "SPOOF3"), nats.Header{wire.HdrDrill: {drill.Panic}, wire.HdrDrillMode: {"on"},
			wire.HdrHubMAC: {testCopyKeys.CurrentID() + ":" + strings.Repeat("0", 64)}}, sandbox.OutcomeParsedFine, func(t *testing.T, r *Report) {
			if r.Sandbox.PanicValue != "" {
				t.Errorf("a forged x-hub-mac was honoured: %q", r.Sandbox.PanicValue)
			}
		}},
		{"unbounded allocation", "hog", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "HOG1"), nil, sandbox.OutcomeMemoryCap, func(t *testing.T, r *Report) {
			if r.Sandbox.PeakRSSBytes < forensicMemoryLimit()/2 {
				t.Errorf("peak %d MiB, want near the cap", r.Sandbox.PeakRSSBytes>>20)
			}
		}},
	}
	seqs := make([]uint64, len(cases))
	for i, c := range cases {
		seqs[i] = publishPoison(t, env.js, c.stage, "ACME", c.payload, c.hdr)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := waitReport(t, env.store, seqs[i], 60*time.Second)
			t.Logf("%s: %s | cpu %v wall %v peak %d MiB", r.ID, r.Sandbox.Summary, r.Sandbox.CPUTime, r.Sandbox.WallTime, r.Sandbox.PeakRSSBytes>>20)
			if r.Sandbox.Outcome != c.want {
				t.Fatalf("outcome %q, want %q: %s\nstderr: %.3000s", r.Sandbox.Outcome, c.want, r.Sandbox.Summary, r.Sandbox.Stderr)
			}
			c.check(t, r)
			payload, err := env.store.Payload(context.Background(), r)
			if err != nil || string(payload) != c.payload {
				t.Fatalf("stored payload %q (%v), want the message byte for byte", payload, err)
			}
			tk, err := env.store.Ticket(context.Background(), r.ID)
			if err != nil || tk.State != TicketOpen || tk.ReportKey != r.Key || tk.Cause != string(c.want) {
				t.Fatalf("ticket %+v (%v)", tk, err)
			}
		})
	}
	// only a copy whose x-hub-mac covers its partner (v2) has its summary
	// sent to that partner's subject: the others name ACME in a header
	// anybody could write (or an older hub's MAC does not cover)
	wantSubject := map[string]string{}
	for i, c := range cases {
		wantSubject[wire.PoisonID(seqs[i])] = "edi.forensic.unknown"
		if c.hdr.Get(wire.HdrHubMAC) == signAsHub {
			wantSubject[wire.PoisonID(seqs[i])] = "edi.forensic.ACME"
		}
	}
	got := map[string]Summary{}
	for len(got) < len(cases) {
		select {
		case m := <-sums:
			var s Summary
			if err := json.Unmarshal(m.Data, &s); err != nil {
				t.Fatalf("summary on %s: %s (%v)", m.Subject, m.Data, err)
			}
			if want := wantSubject[s.ID]; m.Subject != want || (s.Partner == "ACME") != (want == "edi.forensic.ACME") {
				t.Fatalf("summary of %s on %s naming partner %q, want %s", s.ID, m.Subject, s.Partner, want)
			}
			got[s.ID] = s
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d summaries", len(got))
		}
	}
	list, err := env.store.List(context.Background())
	if err != nil || len(list) != len(cases) {
		t.Fatalf("list: %d entries (%v), want %d", len(list), err, len(cases))
	}
	for _, e := range list {
		if e.Outcome == "pending" || e.TicketState != TicketOpen || !e.InStream {
			t.Errorf("list entry %+v", e)
		}
	}
	if n := testCounterReg(t, env, "edihub_sandbox_runs_total"); n != float64(len(cases)) {
		t.Errorf("edihub_sandbox_runs_total = %v, want %d", n, len(cases))
	}
}

// An open breaker starts no children; after the cool-down one trial goes
// through, and when it works the breaker closes. The alert fires once.
func TestForensicsBreakerOpensAndCloses(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	var starts atomic.Int32
	var broken atomic.Bool
	broken.Store(true)
	env := startForensics(t, url, fastForensicsConfig(), func(o *Options) {
		good := o.Spec
		o.Spec = func(stage string) sandbox.Spec {
			starts.Add(1)
			s := good(stage)
			if broken.Load() {
				s.Path = "/nonexistent/edihub" // an infrastructure failure: the child cannot start
			}
			return s
		}
	})
	provisionPoison(t, env.js)
	seq := publishPoison(t, env.js, "parse", "ACME", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "BRK2"), nil)

	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return env.f.BreakerState() == sandbox.BreakerOpen })
	opened := starts.Load()
	if opened != 2 {
		t.Fatalf("%d starts before the breaker opened, want the threshold 2", opened)
	}
	time.Sleep(time.Second) // inside the 2s cool-down
	if n := starts.Load(); n != opened {
		t.Fatalf("the open breaker let %d more children start", n-opened)
	}
	if n := env.alerts.count("SandboxBreakerOpen"); n != 1 {
		t.Fatalf("%d SandboxBreakerOpen alerts, want 1", n)
	}
	broken.Store(false)
	r := waitReport(t, env.store, seq, 30*time.Second)
	if r.Sandbox.Outcome != sandbox.OutcomeParsedFine {
		t.Fatalf("after the cool-down: %s", r.Sandbox.Summary)
	}
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return env.f.BreakerState() == sandbox.BreakerClosed })
	if n := env.alerts.count("SandboxBreakerOpen"); n != 1 {
		t.Fatalf("%d SandboxBreakerOpen alerts, want still 1", n)
	}
	if n := testCounterReg(t, env, "edihub_sandbox_infra_failures_total"); n != 2 {
		t.Errorf("infra failures %v, want 2", n)
	}
}

func testCounterReg(t *testing.T, env *forensicEnv, name string) float64 {
	t.Helper()
	return jetstreamtest.MetricSum(t, env.reg, name)
}

package test

import (
	"context"
	"github.com/edihub/edihub/edifact/edifacttest"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/hub/forensics"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

// childInput is what the forensics worker writes on the child's stdin: a
// one-line JSON preamble, then the payload.
func childInput(payload string) []byte {
	return []byte(`{"v":1,"stage":"parse","partner":"BENCH","headers":{}}` + "\n" + payload)
}

// BenchmarkSandboxChildRealBinary is the cost of one analysis of a small
// interchange in a child of the real edihub binary: fork/exec, Go runtime
// start-up, self-limiting and handshake, prlimit checks, the parse, exit
// and reap. BenchmarkExecTrue is the bare process-spawn floor beside it.
func BenchmarkSandboxChildRealBinary(b *testing.B) {
	spec := &sandbox.Spec{Path: binary, Args: []string{"sandbox", "exec", "--stage", "parse"}}
	in := childInput(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "BENCH1"))
	var cpu, peak int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := sandbox.Run(context.Background(), spec, in)
		if err != nil {
			b.Fatal(err)
		}
		if r.Outcome != sandbox.OutcomeParsedFine {
			b.Fatalf("%s: %s", r.Outcome, r.Summary)
		}
		cpu += int64(r.CPUTime)
		peak = max(peak, r.PeakRSSBytes)
	}
	b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "child-cpu-ms/op")
	b.ReportMetric(float64(peak>>20), "child-peak-MiB")
}

func BenchmarkExecTrue(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQuarantineToReportRealBinary: publish a poison copy, wait for
// its summary (sent after report, payload and ticket are stored), with
// children of the real binary. The copies are unsigned (no keyring), so
// the summaries go to edi.forensic.unknown, not to the partner they name.
func BenchmarkQuarantineToReportRealBinary(b *testing.B) {
	srv := jetstreamtest.StartServer(b, &jetstreamtest.Options{DataDir: b.TempDir()})
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	nc, j, err := ejs.Connect(srv.ClientURL(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, subj := range map[string]string{"POISON": "edi.poison.>", "AUDIT": "edi.audit.>"} {
		if _, err := j.CreateStream(ctx, jsStream(name, subj)); err != nil {
			b.Fatal(err)
		}
	}
	f, err := forensics.New(forensics.Options{Conn: nc, Logger: zerolog.Nop(), Registry: prometheus.NewRegistry(),
		Spec: func(stage string) sandbox.Spec {
			return sandbox.Spec{Path: binary, Args: []string{"sandbox", "exec", "--stage", stage}}
		}})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = f.Run(ctx) }()
	sub, err := nc.SubscribeSync("edi.forensic.unknown")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h := nats.Header{}
		h.Set(wire.HdrOriginalStream, "INGEST")
		h.Set(wire.HdrOriginalSeq, strconv.Itoa(i+1))
		h.Set(wire.HdrPartnerID, "BENCH")
		h.Set(wire.HdrStage, "parse")
		h.Set(wire.HdrDetectedAt, time.Now().UTC().Format(time.RFC3339Nano))
		if _, err := j.PublishMsg(ctx, &nats.Msg{Subject: "edi.poison.parse", Header: h, Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "B"+strconv.Itoa(i)))}); err != nil {
			b.Fatal(err)
		}
		if _, err := sub.NextMsg(30 * time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

func jsStream(name, subject string) jetstream.StreamConfig {
	return jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Storage: jetstream.FileStorage}
}

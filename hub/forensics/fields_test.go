package forensics

import (
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/sandbox"
)

// The report for people starts with the verdict and names the signal, the
// resources and the limits; a report not analysed yet says so.
func TestReportFields(t *testing.T) {
	at := time.Date(2026, 12, 1, 3, 4, 5, 0, time.UTC)
	killed := &Report{ID: "POISON:3", Key: "INGEST/7", Verdict: "memory cap hit: ...", Partner: "ACME", Stage: "parse",
		PoisonCause: "process-died", QuarantinedAt: at, Analyses: 2, AnalysedAt: at, AnalysedBy: "edihub-sandbox",
		PayloadBytes: 42, PayloadSHA256: "ab12",
		Sandbox: &sandbox.Report{Outcome: sandbox.OutcomeMemoryCap, Summary: "memory cap at segment 4", Signal: "SIGKILL", ExitCode: -1,
			CPUTime: 1500 * time.Millisecond, WallTime: 2 * time.Second, PeakRSSBytes: 300 << 20, Stack: "goroutine 1\n\tmain.go:3",
			Limits: sandbox.Limits{MemoryBytes: 256 << 20, BaselineDataBytes: 12 << 20, CPUSeconds: 30, AppliedBy: "child+parent"},
			Notes:  []string{"record truncated"}}}
	for _, c := range []struct {
		name string
		r    *Report
		want []string // name=value, in this order
	}{
		{"killed", killed, []string{
			"verdict=memory cap hit: ...", "outcome=memory-cap", "summary=memory cap at segment 4", "signal=SIGKILL",
			"resources=cpu 1.5s, wall 2s, peak 300 MiB, exit code -1 (killed by signal SIGKILL)",
			"limits=memory 256 MiB over a 12 MiB start-up, cpu 30s, applied by child+parent", "note=record truncated",
			"partner=ACME", "stage=parse", "poison cause=process-died", "quarantined=2026-12-01 03:04:05Z",
			"analysed=2 time(s), last 2026-12-01 03:04:05Z by edihub-sandbox", "report=INGEST/7/report.json", "payload=42 bytes, sha256 ab12"}},
		{"not analysed", &Report{ID: "POISON:4", Key: "INGEST/8", Partner: "ACME", Stage: "parse"}, []string{
			"outcome=not analysed yet", "partner=ACME", "stage=parse", "report=INGEST/8/report.json"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range c.r.Fields() {
				got = append(got, f.Name+"="+f.Value)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("fields:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

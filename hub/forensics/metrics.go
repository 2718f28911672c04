package forensics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the analysis worker's collectors: edihub_sandbox_*,
// on the registry the worker is given.
type metrics struct {
	runs          *prometheus.CounterVec // outcome
	infraFailures prometheus.Counter
	runDuration   prometheus.Histogram
	toReport      prometheus.Histogram
	childCPU      prometheus.Histogram
	childPeak     prometheus.Histogram
	breakerState  prometheus.Gauge
	breakerOpens  prometheus.Counter
	inFlight      prometheus.Gauge
	storeErrors   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_sandbox_runs_total", Help: "Sandboxed analyses by outcome (parsed-fine, reproduced-error, panic, memory-cap, cpu-cap, wall-timeout, killed-by-signal, crashed; payload-unavailable: a quarantined upload whose bytes could not be read, or were not because the copy's x-hub-mac does not vouch for it; no child ran).",
		}, []string{"outcome"}),
		infraFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_sandbox_infra_failures_total", Help: "Children that could not be started, handshaken or limited (what the breaker counts).",
		}),
		runDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "edihub_sandbox_run_duration_seconds", Help: "Wall time of one sandboxed analysis, start to reap.",
			Buckets: prometheus.ExponentialBuckets(0.005, 3, 10),
		}),
		toReport: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "edihub_sandbox_quarantine_to_report_seconds", Help: "From x-detected-at of the poison copy to the stored report.",
			Buckets: prometheus.ExponentialBuckets(0.01, 3, 10),
		}),
		childCPU: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "edihub_sandbox_child_cpu_seconds", Help: "CPU time (user+system) of one analysis child.",
			Buckets: prometheus.ExponentialBuckets(0.005, 3, 10),
		}),
		childPeak: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "edihub_sandbox_child_peak_memory_bytes", Help: "Peak resident memory (VmHWM) of one analysis child.",
			Buckets: prometheus.ExponentialBuckets(4<<20, 2, 10),
		}),
		breakerState: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_sandbox_breaker_state_code", Help: "Circuit breaker: 0 closed, 1 open, 2 half-open.",
		}),
		breakerOpens: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_sandbox_breaker_opens_total", Help: "Times the breaker opened after consecutive infrastructure failures.",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_sandbox_children_count", Help: "Analysis children running now.",
		}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_sandbox_store_errors_total", Help: "Reports, payloads or tickets that could not be stored (the message is analysed again).",
		}),
	}
	reg.MustRegister(m.runs, m.infraFailures, m.runDuration, m.toReport, m.childCPU, m.childPeak,
		m.breakerState, m.breakerOpens, m.inFlight, m.storeErrors)
	return m
}

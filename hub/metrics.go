package hub

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edihub/edihub/wire"
)

// metrics are the hub's Prometheus collectors, registered on the registry
// that cmd creates (no global registry).
type metrics struct {
	messages          *prometheus.CounterVec   // stage, outcome
	duration          *prometheus.HistogramVec // stage
	attempts          *prometheus.HistogramVec // outcome: attempts a message needed
	poison            *prometheus.CounterVec   // stage, cause
	retries           *prometheus.CounterVec   // stage, tier
	deadLetters       *prometheus.CounterVec   // stage, cause
	dlqDepth          *prometheus.GaugeVec     // stage, cause: see setDLQDepth
	counterRecords    prometheus.Gauge
	counterWrites     prometheus.Counter
	counterErrors     prometheus.Counter
	lag               *prometheus.GaugeVec   // partition
	redeliveries      *prometheus.CounterVec // partition
	alerts            *prometheus.CounterVec // alert, sink, result
	abandoned         prometheus.Gauge
	duplicates        prometheus.Counter
	maxDeliveries     prometheus.Counter
	duplicatesSkipped prometheus.Counter
	copyFailures      *prometheus.CounterVec // kind
	pinChanges        prometheus.Counter

	// the happy path's series, looked up once
	okMessages prometheus.Counter
	okDuration prometheus.Observer
	okAttempts prometheus.Observer

	depthMu     sync.Mutex
	depthSeries map[[2]string]bool // dlqDepth series set by the last setDLQDepth
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_pipeline_messages_total", Help: "Messages by stage and outcome (ok, retry, dead-letter, poison).",
		}, []string{"stage", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "edihub_pipeline_processing_duration_seconds", Help: "Time of one pipeline attempt.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"stage"}),
		attempts: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "edihub_pipeline_attempts_count", Help: "Attempts a message took before it left the partition.",
			Buckets: []float64{1, 2, 3, 4, 5, 6, 8, 10, 15},
		}, []string{"outcome"}),
		poison: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_poison_detected_total", Help: "Messages quarantined as poison.",
		}, []string{"stage", "cause"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_retry_scheduled_total", Help: "Retries by stage and tier (in-place retries have tier \"in-place\").",
		}, []string{"stage", "tier"}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_dlq_messages_total", Help: "Messages sent to a dead-letter queue.",
		}, []string{"stage", "cause"}),
		dlqDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "edihub_dlq_depth_messages", Help: "Messages held in each dead-letter subject, as the stream counts them: an edited original kept as evidence counts beside its edit (edihub dlq ls lists those apart).",
		}, []string{"stage", "cause"}),
		counterRecords: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_counter_records_count", Help: "Messages with failure records in the attempt store.",
		}),
		counterWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_counter_writes_total", Help: "Writes to the attempt store (failures only; healthy messages write nothing).",
		}),
		counterErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_counter_write_errors_total", Help: "Failed reads or writes of the attempt store.",
		}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "edihub_partition_lag_messages", Help: "Messages waiting in each partition (consumer num_pending).",
		}, []string{"partition"}),
		redeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_partition_redeliveries_total", Help: "Deliveries with a delivery count above one.",
		}, []string{"partition"}),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_alerts_sent_total", Help: "Alerts handed to a sink, by result.",
		}, []string{"alert", "sink", "result"}),
		abandoned: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_pipeline_abandoned_handlers_count", Help: "Handlers that overran their deadline and still run.",
		}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_publish_duplicates_total", Help: "Publishes the server recognised as duplicates (re-publish after a crash).",
		}),
		maxDeliveries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_advisory_max_deliveries_total", Help: "MAX_DELIVERIES advisories copied into quarantine.",
		}),
	}
	m.duplicatesSkipped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "edihub_pipeline_duplicate_interchanges_total", Help: "Interchanges the ledger had seen, acked without processing.",
	})
	m.copyFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "edihub_pipeline_copy_failures_total", Help: "Tries to store a poison, dead-letter or retry copy that failed (the message waits in its source).",
	}, []string{"kind"})
	m.pinChanges = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "edihub_cluster_partition_pins_total", Help: "Times the server pinned a partition to this instance (a take-over on a cluster).",
	})
	m.okMessages = m.messages.WithLabelValues("pipeline", "ok")
	m.okDuration = m.duration.WithLabelValues("pipeline")
	m.okAttempts = m.attempts.WithLabelValues("ok")
	reg.MustRegister(m.duplicatesSkipped, m.copyFailures, m.messages, m.duration, m.attempts, m.poison, m.retries, m.deadLetters, m.dlqDepth,
		m.counterRecords, m.counterWrites, m.counterErrors, m.lag, m.redeliveries, m.alerts, m.abandoned,
		m.duplicates, m.maxDeliveries, m.pinChanges)
	return m
}

// otherLabel stands for a stage or cause that is not configured.
const otherLabel = "other"

// setDLQDepth sets edihub_dlq_depth_messages from the message count of
// each DLQ subject (edi.<stage>.dlq.<cause>). Subjects are data: anyone
// allowed to publish into the DLQ stream picks their tokens, escape
// sequences included. So a label is only ever a configured stage or a
// known cause, and anything else counts under "other": at most
// (stages+1)×(causes+1) series, none of them chosen by a publisher. A
// series whose subjects emptied (purged, expired, replayed) is deleted
// rather than left at its last value.
func (m *metrics) setDLQDepth(stages []string, depth map[string]uint64) {
	known := make(map[string]bool, len(stages))
	for _, s := range stages {
		known[s] = true
	}
	sums := map[[2]string]uint64{}
	for subj, n := range depth {
		stage, cause, ok := wire.ParseDLQSubject(subj)
		if !ok || !known[stage] {
			stage = otherLabel
		}
		if !ok || !wire.ValidCause(cause) {
			cause = otherLabel
		}
		if n > 0 {
			sums[[2]string{stage, cause}] += n
		}
	}
	m.depthMu.Lock()
	defer m.depthMu.Unlock()
	for k := range m.depthSeries {
		if _, ok := sums[k]; !ok {
			m.dlqDepth.DeleteLabelValues(k[0], k[1])
		}
	}
	m.depthSeries = make(map[[2]string]bool, len(sums))
	for k, n := range sums {
		m.dlqDepth.WithLabelValues(k[0], k[1]).Set(float64(n))
		m.depthSeries[k] = true
	}
}

package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edihub/edihub/wire"
)

// Pipeline is the hub's Prometheus collectors, registered on the registry
// that the application creates (no global registry).
type Pipeline struct {
	Messages          *prometheus.CounterVec   // stage, outcome
	Duration          *prometheus.HistogramVec // stage
	Attempts          *prometheus.HistogramVec // outcome: attempts a message needed
	Poison            *prometheus.CounterVec   // stage, cause
	Retries           *prometheus.CounterVec   // stage, tier
	DeadLetters       *prometheus.CounterVec   // stage, cause
	DLQDepth          *prometheus.GaugeVec     // stage, cause: see SetDLQDepth
	CounterRecords    prometheus.Gauge
	CounterWrites     prometheus.Counter
	CounterErrors     prometheus.Counter
	Lag               *prometheus.GaugeVec   // partition
	Redeliveries      *prometheus.CounterVec // partition
	InFlight          *prometheus.GaugeVec   // partition, state: see InFlightOf
	PipelineDiscarded prometheus.Counter     // runs ahead thrown away (hub.partner_pipeline)
	PipelineRechecked prometheus.Counter     // runs ahead whose stage's decision changed at their turn
	GroupedMessages   prometheus.Counter     // messages settled in groups (hub.partner_pipeline)
	GroupSize         prometheus.Histogram   // messages per group settle
	GroupFallbacks    *prometheus.CounterVec // reason: groups settled one at a time instead
	Alerts            *prometheus.CounterVec // alert, sink, result
	Abandoned         prometheus.Gauge
	Duplicates        prometheus.Counter
	MaxDeliveries     prometheus.Counter
	DuplicatesSkipped prometheus.Counter
	CopyFailures      *prometheus.CounterVec // kind
	PinChanges        prometheus.Counter
	PeerOutcomes      *prometheus.CounterVec // event: see hub/peers.go
	Refetches         *prometheus.CounterVec // how: nak-again, handed-back (hub/refetch.go)
	Spilled           prometheus.Gauge       // partners over hub.partner_max_in_flight on a park consumer of their own
	Spills            prometheus.Counter     // times a partner spilled

	// the happy path's series, looked up once
	OKMessages prometheus.Counter
	OKDuration prometheus.Observer
	OKAttempts prometheus.Observer

	depthMu     sync.Mutex
	depthSeries map[[2]string]bool // dlqDepth series set by the last SetDLQDepth
}

// New creates the collectors and registers them on reg.
func New(reg prometheus.Registerer) *Pipeline {
	m := &Pipeline{
		Messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_pipeline_messages_total", Help: "Messages by stage and outcome (ok, retry, dead-letter, poison).",
		}, []string{"stage", "outcome"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "edihub_pipeline_processing_duration_seconds", Help: "Time of one pipeline attempt.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"stage"}),
		Attempts: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "edihub_pipeline_attempts_count", Help: "Attempts a message took before it left the partition.",
			Buckets: []float64{1, 2, 3, 4, 5, 6, 8, 10, 15},
		}, []string{"outcome"}),
		Poison: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_poison_detected_total", Help: "Messages quarantined as poison.",
		}, []string{"stage", "cause"}),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_retry_scheduled_total", Help: "Retries by stage and tier (in-place retries have tier \"in-place\").",
		}, []string{"stage", "tier"}),
		DeadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_dlq_messages_total", Help: "Messages sent to a dead-letter queue.",
		}, []string{"stage", "cause"}),
		DLQDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "edihub_dlq_depth_messages", Help: "Messages held in each dead-letter subject, as the stream counts them: an edited original kept as evidence counts beside its edit (edihub dlq ls lists those apart).",
		}, []string{"stage", "cause"}),
		CounterRecords: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_counter_records_count", Help: "Messages with failure records in the attempt store.",
		}),
		CounterWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_counter_writes_total", Help: "Writes to the attempt store (failures only; healthy messages write nothing).",
		}),
		CounterErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_counter_write_errors_total", Help: "Failed reads or writes of the attempt store.",
		}),
		Lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "edihub_partition_lag_messages", Help: "Messages waiting in each partition (consumer num_pending).",
		}, []string{"partition"}),
		Redeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_partition_redeliveries_total", Help: "Deliveries with a delivery count above one.",
		}, []string{"partition"}),
		InFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "edihub_partition_in_flight_messages",
			Help: "Messages a partition has in hand (delivered, not settled): state held counts all of them, running those taken to run (their stages, their settle, or waiting for their turn: up to hub.partner_pipeline per partner).",
		}, []string{"partition", "state"}),
		PipelineDiscarded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_partner_pipeline_discarded_total",
			Help: "Messages that ran ahead of an earlier one of their partner and were thrown away because that one stayed in the consumer (a nak); each runs again after it.",
		}),
		PipelineRechecked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_partner_pipeline_rechecked_total",
			Help: "Messages that ran ahead of an earlier one of their partner and were found, at their turn, to be duplicates of what settled before them.",
		}),
		GroupedMessages: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_partner_pipeline_grouped_messages_total",
			Help: "Messages settled in a group with others of their partner: one batch of outputs (fast or atomic), one ledger group, acks in order.",
		}),
		GroupSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "edihub_partner_pipeline_group_size_messages", Help: "Messages per group settle (the head and the ready ones behind it).",
			Buckets: []float64{2, 3, 4, 6, 8, 12, 16, 24, 32, 64},
		}),
		GroupFallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_partner_pipeline_group_fallbacks_total",
			Help: "Groups not stored whole, settled from the head one at a time: reason duplicate (an atomic batch with a dedupe id stored before), prefix (a fast batch of which only a first part was stored), unavailable (the server or stream takes no batches of the kind picked), failed (anything else).",
		}, []string{"reason"}),
		Alerts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_alerts_sent_total", Help: "Alerts handed to a sink, by result.",
		}, []string{"alert", "sink", "result"}),
		Abandoned: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_pipeline_abandoned_handlers_count", Help: "Handlers that overran their deadline and still run.",
		}),
		Duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_publish_duplicates_total", Help: "Publishes the server recognised as duplicates (re-publish after a crash).",
		}),
		MaxDeliveries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edihub_advisory_max_deliveries_total", Help: "MAX_DELIVERIES advisories copied into quarantine.",
		}),
	}
	m.DuplicatesSkipped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "edihub_pipeline_duplicate_interchanges_total", Help: "Interchanges the ledger had seen, acked without processing.",
	})
	m.CopyFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "edihub_pipeline_copy_failures_total", Help: "Tries to store a poison, dead-letter or retry copy that failed (the message waits in its source).",
	}, []string{"kind"})
	m.PinChanges = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "edihub_cluster_partition_pins_total", Help: "Times the server pinned a partition to this instance (a take-over on a cluster).",
	})
	m.PeerOutcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "edihub_cluster_unstored_announcements_total",
		Help: "Announcements of outcomes the attempt store refused, between the hubs of a cluster: sent, received (verified), applied (a peer's outcome stored here), refused (no or a wrong x-hub-mac, too large, unreadable).",
	}, []string{"event"})
	m.Refetches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "edihub_partition_refetches_total", Help: "Late retried-in-place heads asked for again (nak-again), and messages handed back to the instance holding the pin (handed-back).",
	}, []string{"how"})
	m.Spilled = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "edihub_partition_spilled_partners",
		Help: "Partners that had more than hub.partner_max_in_flight messages in hand and now run from a park consumer of their own, out of their partition's window (in the partitions this instance runs).",
	})
	m.Spills = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "edihub_partition_spills_total",
		Help: "Times a partner went over hub.partner_max_in_flight and spilled to a park consumer of its own.",
	})
	m.OKMessages = m.Messages.WithLabelValues("pipeline", "ok")
	m.OKDuration = m.Duration.WithLabelValues("pipeline")
	m.OKAttempts = m.Attempts.WithLabelValues("ok")
	reg.MustRegister(m.DuplicatesSkipped, m.CopyFailures, m.Messages, m.Duration, m.Attempts, m.Poison, m.Retries, m.DeadLetters, m.DLQDepth,
		m.CounterRecords, m.CounterWrites, m.CounterErrors, m.Lag, m.Redeliveries, m.InFlight, m.PipelineDiscarded, m.PipelineRechecked, m.GroupedMessages, m.GroupSize, m.GroupFallbacks, m.Alerts, m.Abandoned,
		m.Duplicates, m.MaxDeliveries, m.PinChanges, m.PeerOutcomes, m.Refetches, m.Spilled, m.Spills)
	return m
}

// InFlightOf is a partition's edihub_partition_in_flight_messages series,
// held and running, looked up once per partition.
func (m *Pipeline) InFlightOf(partition string) (held, running prometheus.Gauge) {
	return m.InFlight.WithLabelValues(partition, "held"), m.InFlight.WithLabelValues(partition, "running")
}

// otherLabel stands for a stage or cause that is not configured.
const otherLabel = "other"

// SetDLQDepth sets edihub_dlq_depth_messages from the message count of
// each DLQ subject (edi.<stage>.dlq.<cause>). Subjects are data: anyone
// allowed to publish into the DLQ stream picks their tokens, escape
// sequences included. So a label is only ever a configured stage or a
// known cause, and anything else counts under "other": at most
// (stages+1)×(causes+1) series, none of them chosen by a publisher. A
// series whose subjects emptied (purged, expired, replayed) is deleted
// rather than left at its last value.
func (m *Pipeline) SetDLQDepth(stages []string, depth map[string]uint64) {
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
			m.DLQDepth.DeleteLabelValues(k[0], k[1])
		}
	}
	m.depthSeries = make(map[[2]string]bool, len(sums))
	for k, n := range sums {
		m.DLQDepth.WithLabelValues(k[0], k[1]).Set(float64(n))
		m.depthSeries[k] = true
	}
}

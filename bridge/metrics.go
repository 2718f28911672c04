package bridge

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the bridge's Prometheus series, registered on the registerer
// handed to New. A second bridge on the same registerer (a restart inside
// one process, tests) shares the first one's collectors instead of failing.
type metrics struct {
	records     *prometheus.CounterVec // direction, route
	bytes       *prometheus.CounterVec // direction, route
	quarantined *prometheus.CounterVec // direction, route, cause
	errors      *prometheus.CounterVec // direction, route, op
	skipped     *prometheus.CounterVec // route
	duplicates  *prometheus.CounterVec // route
	resets      *prometheus.CounterVec // route
	brokerUp    prometheus.Gauge
	partLag     *prometheus.GaugeVec     // route, group, topic, partition
	lag         *prometheus.GaugeVec     // route
	batch       *prometheus.HistogramVec // direction, route
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		reg = prometheus.NewRegistry() // metrics wanted by no one still count
	}
	m := &metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_bridge_records_total",
			Help: "Records moved between Kafka and JetStream and acknowledged on both sides (quarantined ones included).",
		}, []string{"direction", "route"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_bridge_payload_bytes_total",
			Help: "Payload bytes moved.",
		}, []string{"direction", "route"}),
		quarantined: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_bridge_quarantined_total",
			Help: "Records that could not be mapped and went to the poison subject, by cause.",
		}, []string{"direction", "route", "cause"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_bridge_errors_total",
			Help: "Failed operations that the bridge retries (fetch, publish, produce, commit, ack).",
		}, []string{"direction", "route", "op"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_bridge_skipped_total",
			Help: "Messages an outbound route acked without producing because the bridge itself wrote them (x-bridge-copy): a feedback loop cut.",
		}, []string{"route"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_bridge_duplicates_total",
			Help: "Inbound records JetStream reported as duplicates of a stored one (re-read after a crash); logged once per partition per run.",
		}, []string{"route"}),
		resets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edihub_bridge_consumer_resets_total",
			Help: "Outbound consumers reset to their ack floor to keep per-partner order (unacked messages of a dead instance, lost deliveries).",
		}, []string{"route"}),
		brokerUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "edihub_bridge_broker_up",
			Help: "1 while the Kafka brokers answer the bridge's health check (every health_interval), 0 otherwise.",
		}),
		partLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "edihub_bridge_kafka_lag_records",
			Help: "Inbound: records in a Kafka partition not yet committed by the route's consumer group.",
		}, []string{"route", "group", "topic", "partition"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "edihub_bridge_lag_records",
			Help: "Records not yet moved: Kafka committed-offset lag inbound, consumer pending plus unacked outbound.",
		}, []string{"route"}),
		batch: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "edihub_bridge_batch_duration_seconds",
			Help:    "Time to move one batch, from read to commit or ack.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"direction", "route"}),
	}
	var err error
	m.records = register(reg, m.records, &err)
	m.bytes = register(reg, m.bytes, &err)
	m.quarantined = register(reg, m.quarantined, &err)
	m.errors = register(reg, m.errors, &err)
	m.skipped = register(reg, m.skipped, &err)
	m.duplicates = register(reg, m.duplicates, &err)
	m.resets = register(reg, m.resets, &err)
	m.brokerUp = register(reg, m.brokerUp, &err)
	m.partLag = register(reg, m.partLag, &err)
	m.lag = register(reg, m.lag, &err)
	m.batch = register(reg, m.batch, &err)
	return m, err
}

// register adds c to reg, or returns the collector already registered under
// the same description.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		if *errp == nil {
			*errp = err
		}
	}
	return c
}

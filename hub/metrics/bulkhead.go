package metrics

import "github.com/prometheus/client_golang/prometheus"

// Bulkhead is what the per-partner bulkhead exposes: the partners paused
// now (a label per paused partner only, removed on resume, so the label
// set stays as small as the pauses) and how many pauses were taken.
type Bulkhead struct {
	paused *prometheus.GaugeVec
	pauses prometheus.Counter
	parked prometheus.Gauge
}

// NewBulkhead creates edihub_bulkhead_partner_paused_info,
// edihub_bulkhead_pauses_total and edihub_bulkhead_parked_partners on reg.
func NewBulkhead(reg prometheus.Registerer) *Bulkhead {
	m := &Bulkhead{
		paused: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "edihub_bulkhead_partner_paused_info",
			Help: "1 for each partner the bulkhead has paused (its messages wait in INGEST until edihub partner resume)."}, []string{"partner"}),
		pauses: prometheus.NewCounter(prometheus.CounterOpts{Name: "edihub_bulkhead_pauses_total",
			Help: "Partners this instance paused because their failures crossed the bulkhead's limit."}),
		parked: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edihub_bulkhead_parked_partners",
			Help: "Partners whose messages wait in INGEST out of their partition's window (a park consumer each), in the partitions this instance runs: paused, or resumed and not yet drained."}),
	}
	reg.MustRegister(m.paused, m.pauses, m.parked)
	return m
}

// Paused notes partner as paused (seen from the pause bucket).
func (m *Bulkhead) Paused(partner string) { m.paused.WithLabelValues(partner).Set(1) }

// Resumed removes partner's series.
func (m *Bulkhead) Resumed(partner string) { m.paused.DeleteLabelValues(partner) }

// Took counts a pause this instance took.
func (m *Bulkhead) Took() { m.pauses.Inc() }

// Parked adds n to the partners parked here (n < 0: drained, or the
// partition left).
func (m *Bulkhead) Parked(n int) { m.parked.Add(float64(n)) }

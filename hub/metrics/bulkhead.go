package metrics

import "github.com/prometheus/client_golang/prometheus"

// Bulkhead is what the per-partner bulkhead exposes: the partners paused
// now (a label per paused partner only, removed on resume, so the label
// set stays as small as the pauses) and how many pauses were taken.
type Bulkhead struct {
	paused *prometheus.GaugeVec
	pauses prometheus.Counter
}

// NewBulkhead creates edihub_bulkhead_partner_paused_info and
// edihub_bulkhead_pauses_total on reg.
func NewBulkhead(reg prometheus.Registerer) *Bulkhead {
	m := &Bulkhead{
		paused: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "edihub_bulkhead_partner_paused_info",
			Help: "1 for each partner the bulkhead has paused (its messages wait in INGEST until edihub partner resume)."}, []string{"partner"}),
		pauses: prometheus.NewCounter(prometheus.CounterOpts{Name: "edihub_bulkhead_pauses_total",
			Help: "Partners this instance paused because their failures crossed the bulkhead's limit."}),
	}
	reg.MustRegister(m.paused, m.pauses)
	return m
}

// Paused notes partner as paused (seen from the pause bucket).
func (m *Bulkhead) Paused(partner string) { m.paused.WithLabelValues(partner).Set(1) }

// Resumed removes partner's series.
func (m *Bulkhead) Resumed(partner string) { m.paused.DeleteLabelValues(partner) }

// Took counts a pause this instance took.
func (m *Bulkhead) Took() { m.pauses.Inc() }

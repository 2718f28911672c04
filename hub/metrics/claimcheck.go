package metrics

import "github.com/prometheus/client_golang/prometheus"

// ClaimCheck counts what the claim check stored aside.
type ClaimCheck struct {
	stored, bytes prometheus.Counter
}

// NewClaimCheck creates edihub_pipeline_payloads_stored_aside_{total,bytes_total} on reg.
func NewClaimCheck(reg prometheus.Registerer) *ClaimCheck {
	m := &ClaimCheck{
		stored: prometheus.NewCounter(prometheus.CounterOpts{Name: "edihub_pipeline_payloads_stored_aside_total",
			Help: "Outputs too large for the NATS server stored in the claim-check bucket and published as a reference."}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "edihub_pipeline_payloads_stored_aside_bytes_total",
			Help: "Bytes of the outputs stored in the claim-check bucket."}),
	}
	reg.MustRegister(m.stored, m.bytes)
	return m
}

// Stored notes an output of size bytes stored aside.
func (m *ClaimCheck) Stored(size int) {
	m.stored.Inc()
	m.bytes.Add(float64(size))
}

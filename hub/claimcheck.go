package hub

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// ClaimChecker stores aside a message too large for the server and gives
// the message to publish in its place: same subject and headers, the
// reference headers (wire.HdrPayloadRef, ...), a stub body
// (claimcheck.Store). name is the message's dedupe id, so a redelivery
// replaces the object instead of adding one.
type ClaimChecker interface {
	Aside(ctx context.Context, m *nats.Msg, name string) (*nats.Msg, error)
}

// ClaimCheckConfig is hub.claim_check: outputs too large for the NATS
// server go into an object store bucket and the message carries a
// reference. Off, they are dead letters (cause unknown).
type ClaimCheckConfig struct {
	// Enabled (default true).
	Enabled *bool `yaml:"enabled"`
	// Bucket is the object store (default edihub-payloads). Its objects
	// are kept as long as hub.retention.parsed.max_age keeps outputs.
	Bucket string `yaml:"bucket"`
}

// On says whether payloads too large are stored aside.
func (c ClaimCheckConfig) On() bool { return c.Enabled == nil || *c.Enabled }

func (c *ClaimCheckConfig) setDefaults() {
	if c.Enabled == nil {
		on := true
		c.Enabled = &on
	}
	setStr(&c.Bucket, wire.DefaultPayloadBucket)
}

func (c *ClaimCheckConfig) validate() []error {
	if _, err := wire.ParsePayloadRef(c.Bucket + "/x"); err != nil {
		return []error{fmt.Errorf("claim_check.bucket %q: letters, digits, - and _ only", c.Bucket)}
	}
	return nil
}

// claimMetrics count what the claim check stored aside.
type claimMetrics struct {
	stored, bytes prometheus.Counter
}

func newClaimMetrics(reg prometheus.Registerer) *claimMetrics {
	m := &claimMetrics{
		stored: prometheus.NewCounter(prometheus.CounterOpts{Name: "edihub_pipeline_payloads_stored_aside_total",
			Help: "Outputs too large for the NATS server stored in the claim-check bucket and published as a reference."}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "edihub_pipeline_payloads_stored_aside_bytes_total",
			Help: "Bytes of the outputs stored in the claim-check bucket."}),
	}
	reg.MustRegister(m.stored, m.bytes)
	return m
}

// storeAside stores output i of d in the claim-check bucket under its
// dedupe id.
func (h *Hub) storeAside(d *delivery, i int, o *nats.Msg) (*nats.Msg, error) {
	ctx, cancel := context.WithTimeout(h.runCtx, h.cfg.Cluster.outputTimeout())
	defer cancel()
	name := wire.OutputMsgID(d.origStream, d.origSeq, i)
	stub, err := h.claim.Aside(ctx, o, name)
	if err != nil {
		return nil, err
	}
	if stub == nil {
		return nil, errors.New("claim check returned no message")
	}
	h.claimMet.stored.Inc()
	h.claimMet.bytes.Add(float64(len(o.Data)))
	h.log.Info().Uint64("seq", d.origSeq).Str("partner", escape.Line(d.partner)).Int("bytes", len(o.Data)).
		Str("ref", stub.Header.Get(wire.HdrPayloadRef)).Msg("output too large for the server stored aside; published as a reference")
	return stub, nil
}

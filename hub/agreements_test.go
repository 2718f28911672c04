package hub

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

type refusal map[string]string

func (r refusal) Error() string                     { return "refused" }
func (r refusal) FailureHeaders() map[string]string { return r }

// A refusal's headers reach its dead letter, escaped, but only the names
// a refusal may set: it cannot overwrite x-partner-id or x-original-seq.
func TestRefusalHeadersOnTheDeadLetter(t *testing.T) {
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		return PermanentError(wire.CauseBusiness, refusal{wire.HdrRule: "total\x1b[31m", wire.HdrRejectReason: "rule-failed",
			wire.HdrPartnerID: "FORGED", wire.HdrOriginalSeq: "999", "x-other": "y"})
	}}
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", fastConfig(), []Stage{stage}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "x", nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 1 })
	m := jetstreamtest.StreamMsgs(t, env.js, "DLQ")[0]
	if m.Header.Get(wire.HdrRule) != `total\x1B[31m` || m.Header.Get(wire.HdrRejectReason) != "rule-failed" {
		t.Errorf("refusal headers: %v", m.Header)
	}
	if m.Header.Get(wire.HdrPartnerID) != "ACME" || m.Header.Get(wire.HdrOriginalSeq) != "1" || m.Header.Get("x-other") != "" {
		t.Errorf("a refusal set headers it may not: %v", m.Header)
	}
	var fh FailureHeaderer
	if !errors.As(PermanentError(wire.CauseBusiness, refusal{}), &fh) {
		t.Fatal("a wrapped refusal is not found")
	}
}

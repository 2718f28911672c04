package hub

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/hub/metrics"
	"github.com/edihub/edihub/hubclient"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// fitHub is a hub with just what outputsFit needs, on a server with a
// 64 KiB max payload; claim is nil or a real claim-check bucket.
func fitHub(tb testing.TB, withClaim bool) (*Hub, *claimcheck.Store) {
	srv := jetstreamtest.StartServer(tb, &jetstreamtest.Options{MaxPayload: 64 << 10})
	nc, j := jetstreamtest.Connect(tb, srv.URL)
	h := &Hub{nc: nc, js: j, runCtx: context.Background(), log: zerolog.Nop(), claimMet: metrics.NewClaimCheck(prometheus.NewRegistry())}
	h.cfg.setDefaults()
	if !withClaim {
		return h, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := claimcheck.Open(ctx, j, claimcheck.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	h.claim = s
	return h, s
}

// Outputs that fit pass unchanged; one over the max payload is stored
// aside and replaced by its reference (the others untouched) with the
// claim check, refused as too large (a dead letter) without it.
func TestOutputsFitStoresAside(t *testing.T) {
	big := bytes.Repeat([]byte("LIN+1'"), 20000) // 120 KB > 64 KiB
	outs := func() []*nats.Msg {
		return []*nats.Msg{{Subject: "edi.parsed.ACME.INVOIC", Header: nats.Header{wire.HdrMessageID: {"A"}}, Data: []byte("small")},
			{Subject: "edi.parsed.ACME.INVOIC", Header: nats.Header{wire.HdrMessageID: {"B"}}, Data: big}}
	}
	d := &delivery{origStream: "INGEST", origSeq: 9, partner: "ACME"}

	off, _ := fitHub(t, false)
	if err := off.outputsFit(d, outs()); !errors.Is(err, nats.ErrMaxPayload) {
		t.Fatalf("claim check off: %v, want ErrMaxPayload", err)
	}

	on, _ := fitHub(t, true)
	o := outs()
	small := o[0]
	if err := on.outputsFit(d, o); err != nil {
		t.Fatal(err)
	}
	if o[0] != small || o[1].Header.Get(wire.HdrPayloadRef) != "edihub-payloads/INGEST:9:out:1" ||
		o[1].Header.Get(wire.HdrMessageID) != "B" || len(o[1].Data) > 512 {
		t.Fatalf("outputs after the check: %v / %v %q", o[0].Header, o[1].Header, o[1].Data)
	}
	got, err := hubclient.PayloadOf(context.Background(), on.js, o[1].Header, o[1].Data)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("payload back: %d bytes, %v", len(got), err)
	}
}

// BenchmarkOutputsFit is the cost of the check on a 1 KB interchange's
// output that fits, without and with the claim check (which is only
// reached for an output that does not fit).
func BenchmarkOutputsFit(b *testing.B) {
	data := bytes.Repeat([]byte("x"), 1024)
	d := &delivery{origStream: "INGEST", origSeq: 1}
	for _, claim := range []bool{false, true} {
		name := "1k/claim-off"
		if claim {
			name = "1k/claim-on"
		}
		h, _ := fitHub(b, claim)
		outs := []*nats.Msg{{Subject: "edi.parsed.P1.INVOIC", Header: nats.Header{wire.HdrMessageID: {"R1"}, wire.HdrPartnerID: {"P1"}}, Data: data}}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := h.outputsFit(d, outs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

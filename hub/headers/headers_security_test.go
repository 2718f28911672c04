package headers

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/wire"
)

// A producer's x-hub-mac is renamed on the way in (it would pass for the
// hub's mark on a copy), and neither it nor x-drill reaches a parsed output.
func TestProducerMACAndDrillStayOut(t *testing.T) {
	h := nats.Header{wire.HdrHubMAC: {"k:forged"}, wire.HdrDrill: {"panic"}, "x-custom": {"kept"}}
	ph := Producer(h)
	if ph.Get(wire.HdrHubMAC) != "" || ph.Get(wire.HdrProducerPrefix+wire.HdrHubMAC) != "k:forged" {
		t.Fatalf("copy headers: %v", ph)
	}
	out := Carried(h)
	if out.Get(wire.HdrHubMAC) != "" || out.Get(wire.HdrDrill) != "" || out.Get("x-custom") != "kept" {
		t.Fatalf("parsed output headers: %v", out)
	}
}

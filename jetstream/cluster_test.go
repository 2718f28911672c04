package jetstream

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

// R3 on a single server is refused with what to do; R1 is fine.
func TestCheckReplicasRefusesR3OnOneServer(t *testing.T) {
	url := runServer(t, t.TempDir())
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := CheckReplicas(nc, 1); err != nil {
		t.Fatalf("R1: %v", err)
	}
	err = CheckReplicas(nc, 3)
	if err == nil || !strings.Contains(err.Error(), "single server") || !strings.Contains(err.Error(), "nats.replicas") {
		t.Fatalf("R3 on one server: %v", err)
	}
}

func TestClusterOptionsValidate(t *testing.T) {
	good := ClusterOptions{Name: "edi", Listen: "127.0.0.1:6222", Routes: []string{"nats-route://127.0.0.1:6222", "nats-route://127.0.0.1:6223", "nats-route://127.0.0.1:6224"}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]ClusterOptions{
		"no name":    {Listen: good.Listen, Routes: good.Routes},
		"bad listen": {Name: "edi", Listen: "6222", Routes: good.Routes},
		"one route":  {Name: "edi", Listen: good.Listen, Routes: good.Routes[:1]},
		"bad route":  {Name: "edi", Listen: good.Listen, Routes: []string{"http://x:1", "nats-route://y:2"}},
		"dotted":     {Name: "a.b", Listen: good.Listen, Routes: good.Routes},
	} {
		if c.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if (ClusterOptions{}).Validate() != nil {
		t.Error("no cluster refused")
	}
}

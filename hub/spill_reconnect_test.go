package hub

import (
	"fmt"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// A spill drain whose connection dies under it, three times: what a fetch
// had on its way is lost with the link, and the server hands it back only
// after its ack wait, while the next fetch on the new connection gets the
// partner's later messages at once. The drain holds those until the lost
// ones are back: the flood reaches PARSED in order, each once.
func TestSpillDrainKeepsOrderThroughReconnects(t *testing.T) {
	cfg := spillConfig()
	release := make(chan struct{})
	// slow enough (a few hundred a second) for three cuts inside the drain
	stage := echoStage("parse", func(m *Message) error {
		if string(m.Data) == "F00000" {
			<-release // its backlog spills while it is stuck
		}
		time.Sleep(2 * time.Millisecond)
		return nil
	})
	srv := jetstreamtest.StartServer(t, nil)
	proxy := startCutProxy(t, srv.HostPort)
	_, j := jetstreamtest.Connect(t, srv.URL) // the test's own connection does not go through the proxy
	env := startHub(t, proxy.url(), "", cfg, []Stage{stage}, nil)
	const flood = 3000
	for i := range flood {
		jetstreamtest.PublishIngest(t, j, "F", fmt.Sprintf("F%05d", i), nil)
	}
	jetstreamtest.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if p := parkConsumers(t, env); len(p) != 1 {
			return fmt.Errorf("park consumers %v, want F's", p)
		}
		return nil
	})
	close(release)
	parsed := func() int { return jetstreamtest.CountMsgs(t, j, env.hub.cfg.Streams.Parsed) }
	for cut := range 3 {
		at := parsed()
		jetstreamtest.CheckFor(t, 60*time.Second, 10*time.Millisecond, func() error {
			if n := parsed(); n < at+100 {
				return fmt.Errorf("cut %d: %d parsed, want %d", cut, n, at+100)
			}
			return nil
		})
		if parsed() >= flood-200 {
			t.Fatalf("the drain ran out before cut %d: make the flood longer", cut)
		}
		proxy.freeze() // what the server sends now is lost
		time.Sleep(300 * time.Millisecond)
		proxy.cut()
		t.Logf("cut %d at %d parsed", cut, parsed())
	}
	jetstreamtest.CheckFor(t, 3*time.Minute, 100*time.Millisecond, func() error {
		if n := parsed(); n < flood {
			return fmt.Errorf("%d of %d parsed", n, flood)
		}
		return nil
	})
	jetstreamtest.Settle(t, j, 30*time.Second, env.hub.cfg.Streams.Ingest, env.hub.cfg.Streams.Parsed)
	if err := checkPartnerParsed(env, t, "F", flood); err != nil {
		got := parsedOf(t, env, "F")
		for i, g := range got {
			if want := fmt.Sprintf("F%05d", i); g != want {
				t.Logf("PARSED[%d..] = %v", i, got[i:min(len(got), i+12)])
				break
			}
		}
		t.Fatal(err)
	}
}

package client

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// A link bound to its connection says the connection is lost as soon as
// the connection's status does, before nats.go's disconnect callback has
// run (a publish can fail with "outbound buffer limit exceeded" first),
// says when it is back, and counts the outage once whichever of the two
// saw it first.
func TestLinkFollowsTheConnectionsStatus(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	l := NewLink()
	nc, err := nats.Connect(srv.URL, append(l.Options(), nats.ReconnectWait(50*time.Millisecond), nats.MaxReconnects(-1))...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	l.Bind(nc)
	if !l.Connected() {
		t.Fatal("not connected at the start")
	}
	srv.Stop()
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return !l.Connected() }, "still connected after the server stopped")
	select {
	case <-l.Lost():
	default:
		t.Fatal("Lost not closed while the connection is down")
	}
	jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: srv.DataDir, Listen: srv.HostPort})
	jetstreamtest.Eventually(t, 20*time.Second, l.Connected, "not back after the server came back")
	// the late callbacks must not count the outage twice, nor take the link down again
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return l.LastDrop() != nil }, "the drop's reason never arrived")
	if n := l.Outages(); n != 1 {
		t.Fatalf("%d outages counted, want 1", n)
	}
	if !l.Connected() {
		t.Fatal("down again after the callbacks")
	}
}

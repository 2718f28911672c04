package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// cutProxy forwards TCP connections to a server. freeze makes every
// connection open now drop what either side sends (a link that went dead:
// the sockets stay open, nothing arrives); cut closes them, so the client
// reconnects through the proxy on a clean connection.
type cutProxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	mu     sync.Mutex
	pairs  []*proxyPair
	// dropped is what frozen clients sent that never reached the server
	dropped bytes.Buffer
}

type proxyPair struct {
	client, server net.Conn
	frozen         atomic.Bool
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{t: t, ln: ln, target: target}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
	})
	return p
}

func (p *cutProxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *cutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		pr := &proxyPair{client: c, server: s}
		p.mu.Lock()
		p.pairs = append(p.pairs, pr)
		p.mu.Unlock()
		go p.pipe(pr, c, s, true)
		go p.pipe(pr, s, c, false)
	}
}

// pipe copies from to to until either closes, dropping what comes while
// the pair is frozen (and keeping what a client sent then in dropped).
func (p *cutProxy) pipe(pr *proxyPair, from, to net.Conn, fromClient bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			if pr.frozen.Load() {
				if fromClient {
					p.mu.Lock()
					p.dropped.Write(buf[:n])
					p.mu.Unlock()
				}
			} else if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // closed by either side, or by cut
			to.Close()
			return
		}
	}
}

func (p *cutProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.pairs {
		pr.frozen.Store(true)
	}
}

// droppedContains reports whether a frozen client sent s.
func (p *cutProxy) droppedContains(s string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Contains(p.dropped.Bytes(), []byte(s))
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	pairs := p.pairs
	p.pairs = nil
	p.mu.Unlock()
	for _, pr := range pairs {
		pr.client.Close()
		pr.server.Close()
	}
}

// A message retried in place whose nak is lost with its connection: the
// server would hand it back only when its ack wait (120 s here) runs out,
// and the lane used to wait for it up to twice that, holding its partner.
// After the reconnect the lane asks for it again at once: it and the
// partner's message behind it reach PARSED well within the ack wait, in
// order, each once.
func TestLostNakIsAskedForAgainAfterReconnect(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	proxy := startCutProxy(t, srv.HostPort)
	cfg := fastConfig()
	cfg.Partitions = 1
	// an ack wait far longer than the recovery may take on a loaded machine:
	// what the test tells apart is "asked for again" from "handed back by
	// the server after the ack wait"
	cfg.Attempts.AckWait = 120 * time.Second
	cfg.Attempts.Deadline = 120 * time.Second // the first attempt waits for the test (below)
	cfg.DuplicateWindow = 5 * time.Minute     // at least twice the ack wait (Validate)
	var attempts atomic.Int32
	bothOut := make(chan struct{})
	behindIn := make(chan struct{})
	sawBehind := sync.OnceFunc(func() { close(behindIn) })
	stage := echoStage("parse", func(m *Message) error {
		if string(m.Data) != "first" {
			sawBehind() // it runs ahead (partner_pipeline): in the hub's hand
			return nil
		}
		if attempts.Add(1) == 1 {
			<-bothOut      // the message behind it is in the lane (a delivery lost with the link is TestDeliveryLostWithTheConnectionKeepsPartnerOrder's)
			proxy.freeze() // the nak that follows is lost with this connection
			return TransientError("", errors.New("a service the stage needs is away"))
		}
		return nil
	})
	env := startHub(t, proxy.url(), "", cfg, []Stage{stage}, nil)
	letGo := sync.OnceFunc(func() { close(bothOut) })
	t.Cleanup(letGo) // a failed wait below must not leave the stage blocked as the hub stops
	// the test's own connection does not go through the proxy
	_, j := jetstreamtest.Connect(t, srv.URL)
	jetstreamtest.PublishIngest(t, j, "ACME", "first", nil)
	jetstreamtest.PublishIngest(t, j, "ACME", "behind", nil)
	// the server's count of what is out is not enough: a delivery it sent
	// may still be on its way through the proxy, and the freeze would drop it
	select {
	case <-behindIn:
	case <-time.After(20 * time.Second):
		t.Fatal("the message behind never ran ahead of the first")
	}
	letGo()

	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return proxy.droppedContains("-NAK") },
		"the nak of the first attempt was not sent on the frozen connection")
	cutAt := time.Now()
	proxy.cut()

	// well within the 120 s ack wait: the server did not hand it back by itself
	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, "PARSED") >= 2 },
		"the partner's messages did not reach PARSED within 60 s of the reconnect (ack_wait 120 s)")
	if d := time.Since(cutAt); d >= cfg.Attempts.AckWait {
		t.Fatalf("recovered %v after the cut, not before the ack wait (%v)", d, cfg.Attempts.AckWait)
	}
	jetstreamtest.Settle(t, j, 10*time.Second, "INGEST", "PARSED")
	var got []string
	for _, m := range jetstreamtest.StreamMsgs(t, j, "PARSED") {
		got = append(got, string(m.Data))
	}
	if len(got) != 2 || got[0] != "first" || got[1] != "behind" {
		t.Fatalf("PARSED holds %q, want [first behind]: in order, each once", got)
	}
	if n := attempts.Load(); n != 2 {
		t.Fatalf("first ran %d times, want 2 (the failed attempt and the re-fetched one)", n)
	}
	if n := testCounter(t, env, "edihub_partition_refetches_total"); n < 1 {
		t.Fatalf("edihub_partition_refetches_total %v: the head came back without being asked for", n)
	}
}

// A delivery lost with its connection (sent by the server, never read by
// the hub) comes back only when its ack wait runs out; the partner's next
// message, published after the reconnect, is delivered at once. It must
// not run first: after a reconnect the partition holds its lanes until
// what the consumer has out is back in hand, and the partner's messages
// reach PARSED in stream order, each once.
func TestDeliveryLostWithTheConnectionKeepsPartnerOrder(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	proxy := startCutProxy(t, srv.HostPort)
	cfg := fastConfig()
	cfg.Partitions = 1
	cfg.Attempts.AckWait = 3 * time.Second // the lost delivery comes back after it
	cfg.Attempts.Deadline = 3 * time.Second
	startHub(t, proxy.url(), "", cfg, []Stage{echoStage("parse", nil)}, nil)
	_, j := jetstreamtest.Connect(t, srv.URL) // the test's own connection does not go through the proxy
	pending := func(want int) func() error {
		return func() error {
			c, err := j.Consumer(context.Background(), "INGEST", "ingest-p0")
			if err != nil {
				return err
			}
			if n := c.CachedInfo().NumAckPending; n != want {
				return fmt.Errorf("%d out, want %d", n, want)
			}
			return nil
		}
	}
	jetstreamtest.PublishIngest(t, j, "ACME", "A", nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, "PARSED") == 1 },
		"A did not reach PARSED")
	jetstreamtest.CheckFor(t, 20*time.Second, 50*time.Millisecond, pending(0))

	proxy.freeze()
	jetstreamtest.PublishIngest(t, j, "ACME", "B", nil)
	// the server delivered B to the hub's pull; the frozen link drops it
	jetstreamtest.CheckFor(t, 20*time.Second, 50*time.Millisecond, pending(1))
	proxy.cut()
	jetstreamtest.PublishIngest(t, j, "ACME", "C", nil)

	jetstreamtest.Eventually(t, 60*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, "PARSED") >= 3 },
		"B and C did not reach PARSED")
	jetstreamtest.Settle(t, j, 10*time.Second, "INGEST", "PARSED")
	var got []string
	for _, m := range jetstreamtest.StreamMsgs(t, j, "PARSED") {
		got = append(got, string(m.Data))
	}
	if len(got) != 3 || got[0] != "A" || got[1] != "B" || got[2] != "C" {
		t.Fatalf("PARSED holds %q, want [A B C]: in stream order, each once", got)
	}
}

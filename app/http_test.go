package app

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func TestHTTPServerHasTimeouts(t *testing.T) {
	s := newHTTPServer(http.NotFoundHandler())
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
		t.Fatalf("timeouts: header %v read %v write %v idle %v", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
	}
	// A client that sends half a request and stalls is cut off.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ReadHeaderTimeout = 100 * time.Millisecond
	go s.Serve(ln)
	defer s.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n"))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(conn); err != nil {
		t.Fatalf("a stalled client kept its connection: %v", err)
	}
}

// /readyz reports not ready while JetStream refuses writes (here: the
// server's store limit is used up) and ready again, without a restart,
// once space is freed.
func TestReadyzFollowsJetStreamWrites(t *testing.T) {
	srv := startStoreLimitedServer(t, 256<<10)
	nc, j := jetstreamtest.Connect(t, srv.ClientURL())
	wc := newJSWriteCheck(j, 1)
	wc.every = 0
	h := readyzHandler(nc, func() string { return "" }, wc)
	status := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := status(); code != http.StatusOK {
		t.Fatalf("fresh server: %d %s", code, body)
	}

	ctx := context.Background()
	fill, err := j.CreateStream(ctx, js.StreamConfig{Name: "FILL", Subjects: []string{"fill"}, Storage: js.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("x"), 8<<10)
	for i := 0; ; i++ {
		if _, err := j.Publish(ctx, "fill", chunk); err != nil {
			break
		}
		if i > 1000 {
			t.Fatal("the store limit never refused a write")
		}
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { code, _ := status(); return code == http.StatusServiceUnavailable })
	if _, body := status(); !strings.Contains(body, "JetStream refuses writes") {
		t.Fatalf("not-ready reason: %s", body)
	}

	if err := fill.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { code, _ := status(); return code == http.StatusOK })
}

// /readyz names the condition that does not hold, in one escaped line:
// what an operator (and a failing test) reads to know why.
func TestReadyzSaysWhyNotReady(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	nc, j := jetstreamtest.Connect(t, srv.URL)
	reason := "hub not running: creating the consumers"
	h := readyzHandler(nc, func() string { return reason }, newJSWriteCheck(j, 1))
	status := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	if code, body := status(); code != http.StatusServiceUnavailable || body != reason {
		t.Fatalf("not ready: %d %q, want 503 %q", code, body, reason)
	}
	reason = "the NATS server's limits: stream INGEST's max_msg_size\nis 1\x1b[2J"
	if _, body := status(); body != `the NATS server's limits: stream INGEST's max_msg_size is 1\x1B[2J` {
		t.Fatalf("a multi-line reason with a control: %q", body)
	}
	reason = ""
	if code, body := status(); code != http.StatusOK || body != "ready" {
		t.Fatalf("ready: %d %q", code, body)
	}
}

// startStoreLimitedServer starts an embedded JetStream server whose store
// holds at most maxStore bytes (jetstreamtest.StartServer sizes it from the
// disk), stopped when the test ends.
func startStoreLimitedServer(t *testing.T, maxStore int64) *server.Server {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		JetStreamMaxStore: maxStore, NoLog: true, NoSigs: true}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	return srv
}

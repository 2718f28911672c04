package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func runServeCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	// Refusals are immediate; the deadline only ends a serve that (wrongly)
	// started.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code := run(ctx, e, append([]string{"serve"}, args...))
	return code, out.String() + errb.String()
}

// A second serve on a data folder that a running one holds refuses at
// once, names the folder and the holder's pid, and opens nothing there.
func TestSecondServeRefusesTheDataFolder(t *testing.T) {
	dir := t.TempDir()
	lock, err := lockDataDir(dir) // what the first serve holds
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, out := runServeCmd(t, "--data", dir, "--listen", "127.0.0.1:-1", "--http", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(out, "data folder "+dir+" in use by pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second serve: exit %d: %s", code, out)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v to refuse", d)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != lockFileName {
		t.Fatalf("the refused serve touched the folder: %v", entries)
	}
	lock.Close()
	lock, err = lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock not released: %v", err)
	}
	lock.Close()
}

// A busy NATS or HTTP port is named at once, not after the embedded
// server's 10 s readiness timeout, and before any store is opened.
func TestServeSaysBusyPortsAtOnce(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	for _, c := range []struct{ what, listen, http string }{
		{"NATS listen address", addr, "127.0.0.1:0"},
		{"HTTP address", "127.0.0.1:-1", addr},
	} {
		dir := t.TempDir()
		start := time.Now()
		code, out := runServeCmd(t, "--data", dir, "--listen", c.listen, "--http", c.http)
		if code != exitUsage || !strings.Contains(out, c.what+" "+addr+": port in use") {
			t.Fatalf("%s busy: exit %d: %s", c.what, code, out)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s busy: took %v", c.what, d)
		}
		if _, err := os.Stat(dir + "/jetstream"); err == nil {
			t.Fatalf("%s busy: the JetStream store was created", c.what)
		}
	}
}

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
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		JetStreamMaxStore: 256 << 10, NoLog: true, NoSigs: true}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	nc, j := jetstreamtest.Connect(t, srv.ClientURL())
	wc := newJSWriteCheck(j, 1)
	wc.every = 0
	h := readyzHandler(nc, func() bool { return true }, wc)
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

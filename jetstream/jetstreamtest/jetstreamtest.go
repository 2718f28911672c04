package jetstreamtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
)

// Options change the test server; nil means defaults (a fresh t.TempDir()
// store, the hub's 32 MiB max payload).
type Options struct {
	// DataDir reuses a store, for tests that restart a server on the same
	// data. Empty: a new temporary folder.
	DataDir string
	// MaxPayload bounds one message; 0: the hub's default.
	MaxPayload int32
	// Listen is the client address; empty: 127.0.0.1 on a free port. A
	// test that restarts a server for the same clients passes the first
	// server's address (Server.HostPort) so that they reconnect to it.
	Listen string
}

// Server is a running embedded server that shuts down with the test.
type Server struct {
	*server.Server
	URL     string
	DataDir string
	// HostPort is the host:port clients connect to (kept after Stop, to
	// restart a server on the same address).
	HostPort string
}

// StartServer starts an embedded nats-server with JetStream on
// 127.0.0.1:-1 and stops it when the test ends.
func StartServer(tb testing.TB, o *Options) *Server {
	tb.Helper()
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.DataDir == "" {
		opts.DataDir = tb.TempDir()
	}
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:-1"
	}
	s, err := ejs.StartServer(&ejs.ServerOptions{DataDir: opts.DataDir, Listen: listen, MaxPayload: opts.MaxPayload})
	if err != nil {
		tb.Fatalf("start test nats-server: %v", err)
	}
	srv := &Server{Server: s, URL: s.ClientURL(), DataDir: opts.DataDir, HostPort: s.Addr().String()}
	tb.Cleanup(srv.Stop)
	return srv
}

// Stop shuts the server down and waits for it; calling it twice is fine,
// so a test can stop a server early and restart one on the same DataDir.
func (s *Server) Stop() {
	s.Shutdown()
	s.WaitForShutdown()
}

// Connect opens a client connection and a JetStream context that close
// when the test ends.
func Connect(tb testing.TB, url string) (*nats.Conn, js.JetStream) {
	tb.Helper()
	nc, j, err := ejs.Connect(url, "test")
	if err != nil {
		tb.Fatalf("connect to test nats-server: %v", err)
	}
	tb.Cleanup(nc.Close)
	return nc, j
}

// CheckFor polls f every interval until it returns nil or timeout passes,
// then fails the test with f's last error.
func CheckFor(tb testing.TB, timeout, interval time.Duration, f func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(interval)
	}
	tb.Fatalf("not within %v: %v", timeout, err)
}

// Eventually polls cond every 10 ms until it holds; msgAndArgs, if
// given, is a format and its arguments that describe the condition.
func Eventually(tb testing.TB, timeout time.Duration, cond func() bool, msgAndArgs ...any) {
	tb.Helper()
	what := "condition not met"
	if len(msgAndArgs) > 0 {
		if f, ok := msgAndArgs[0].(string); ok {
			what = fmt.Sprintf(f, msgAndArgs[1:]...)
		}
	}
	CheckFor(tb, timeout, 10*time.Millisecond, func() error {
		if cond() {
			return nil
		}
		return errors.New(what)
	})
}

package jetstream_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func TestCheckLimits(t *testing.T) {
	const mib = 1 << 20
	stock := ejs.Limits{MaxPayload: mib, Streams: map[string]int64{"INGEST": -1}}
	big := ejs.Limits{MaxPayload: 32 * mib, Streams: map[string]int64{"INGEST": 2 * mib}}
	for _, c := range []struct {
		name   string
		l      ejs.Limits
		need   ejs.Need
		refuse []string // in the error; nil: accepted
	}{
		{"fits the stock server", stock, ejs.Need{Setting: "edifact.max_size", Size: 480 << 10, Stream: "INGEST"}, nil},
		{"just fits, headers counted", stock, ejs.Need{Setting: "edifact.max_size", Size: mib - ejs.HeaderRoom, Stream: "INGEST"}, nil},
		{"one byte over", stock, ejs.Need{Setting: "edifact.max_size", Size: mib - ejs.HeaderRoom + 1, Stream: "INGEST"},
			[]string{"max_payload", "edifact.max_size", "lower edifact.max_size to 1032192"}},
		{"10 MiB on the stock server", stock, ejs.Need{Setting: "edifact.max_size", Size: 10 * mib, Stream: "INGEST"},
			[]string{"the NATS server's max_payload is 1048576", "max_payload: 10502144"}},
		{"the stream is the smaller", big, ejs.Need{Setting: "edifact.max_size", Size: 10 * mib, Stream: "INGEST"},
			[]string{"stream INGEST's max_msg_size is 2097152", "nats stream edit INGEST --max-msg-size=10502144"}},
		{"a stream not there yet has no limit", big, ejs.Need{Setting: "edifact.max_size", Size: 10 * mib, Stream: "OTHER"}, nil},
		{"a stream limit above the payload", ejs.Limits{MaxPayload: mib, Streams: map[string]int64{"INGEST": 8 * mib}},
			ejs.Need{Setting: "edifact.max_size", Size: 2 * mib, Stream: "INGEST"}, []string{"max_payload"}},
	} {
		err := ejs.CheckLimits(c.l, c.need)
		if c.refuse == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted, want refused", c.name)
			continue
		}
		for _, w := range c.refuse {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
}

// natsServerBinary finds nats-server on PATH or where `go install` puts it.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "nats-server")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	t.Skip("nats-server is not installed (go install github.com/nats-io/nats-server/v2@v2.15.2); this test needs a real nats-server process")
	return ""
}

// stockServer runs a nats-server process on port with JetStream and
// extra config (none: the stock limits, max_payload 1 MiB) until stop.
func stockServer(t *testing.T, dir string, port int, extra string) (stop func()) {
	t.Helper()
	cfg := filepath.Join(dir, "server.conf")
	conf := fmt.Sprintf("listen: 127.0.0.1:%d\njetstream { store_dir: %q }\n%s", port, filepath.Join(dir, "js"), extra)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(natsServerBinary(t), "-c", cfg)
	var log bytes.Buffer
	var mu sync.Mutex
	cmd.Stdout, cmd.Stderr = lockedBuffer{&mu, &log}, lockedBuffer{&mu, &log}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			if t.Failed() {
				mu.Lock()
				t.Logf("nats-server log:\n%s", log.String())
				mu.Unlock()
			}
		})
	}
	t.Cleanup(stop)
	jetstreamtest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", port))
		if err != nil {
			return err
		}
		nc.Close()
		return nil
	})
	return stop
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// A real nats-server with its stock configuration (no max_payload: 1 MiB)
// cannot ingest the default 10 MiB interchange: the watch refuses it and
// says which setting to change; a stream's own max_msg_size is read too;
// after a reconnect to a server with a larger max_payload, the limits are
// read again and the configuration passes.
func TestLimitWatchOnARealServer(t *testing.T) {
	dir := t.TempDir()
	port := freePorts(t, 1)[0]
	stop := stockServer(t, dir, port, "")
	nc, j, err := ejs.Connect(fmt.Sprintf("nats://127.0.0.1:%d", port), "limits-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	if nc.MaxPayload() != 1<<20 {
		t.Fatalf("the stock server's max payload is %d, want 1 MiB", nc.MaxPayload())
	}
	if _, err := j.CreateStream(ctx, js.StreamConfig{Name: "INGEST", Subjects: []string{"edi.ingest.>"}}); err != nil {
		t.Fatal(err)
	}
	ten := ejs.Need{Setting: "edifact.max_size", Size: 10 << 20, Stream: "INGEST"}
	if _, err := ejs.NewLimitWatch(ctx, nc, j, ten); err == nil || !strings.Contains(err.Error(), "raise max_payload") {
		t.Fatalf("want 10 MiB refused on the stock server, naming max_payload; got %v", err)
	}
	small := ejs.Need{Setting: "edifact.max_size", Size: 480 << 10, Stream: "INGEST"}
	if _, err := ejs.NewLimitWatch(ctx, nc, j, small); err != nil {
		t.Fatalf("480 KB on the stock server: %v", err)
	}
	if _, err := j.CreateStream(ctx, js.StreamConfig{Name: "SMALL", Subjects: []string{"edi.small.>"}, MaxMsgSize: 256 << 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := ejs.NewLimitWatch(ctx, nc, j, ejs.Need{Setting: "edifact.max_size", Size: 480 << 10, Stream: "SMALL"}); err == nil ||
		!strings.Contains(err.Error(), "max_msg_size of stream SMALL") {
		t.Fatalf("want 480 KB refused by stream SMALL's max_msg_size, got %v", err)
	}

	w, err := ejs.NewLimitWatch(ctx, nc, j, small)
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan error, 4)
	w.WatchReconnects(func(err error) { reports <- err })
	stop()
	stockServer(t, dir, port, "max_payload: 33554432\n")
	jetstreamtest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		if got := w.Limits().MaxPayload; got != 32<<20 {
			return fmt.Errorf("max payload after the reconnect: %d", got)
		}
		return w.Err()
	})
	if err := ejs.CheckLimits(w.Limits(), ten); err != nil {
		t.Fatalf("10 MiB after the reconnect to a 32 MiB server: %v", err)
	}
	select {
	case err := <-reports:
		t.Fatalf("a passing check was reported: %v", err)
	default:
	}
}

// The server's max_payload is one for every stream: said once.
func TestCheckLimitsSaysMaxPayloadOnce(t *testing.T) {
	l := ejs.Limits{MaxPayload: 1 << 20, Streams: map[string]int64{}}
	var needs []ejs.Need
	for _, s := range []string{"INGEST", "DLQ", "POISON"} {
		needs = append(needs, ejs.Need{Setting: "hub.edifact.max_size", Size: 10 << 20, Stream: s})
	}
	err := ejs.CheckLimits(l, needs...)
	if err == nil || strings.Count(err.Error(), "max_payload is") != 1 {
		t.Fatalf("want one refusal, got %v", err)
	}
}

// A reading that fails after a reconnect (here: the server reconnected to
// has no JetStream yet, as a cluster electing a stream's leader answers no
// stream info for seconds) is no verdict: the watch says so in Err, reports
// it once, and reads again by itself until it succeeds, without waiting for
// another reconnect (before, Err kept the failed reading for good, and the
// hub's /readyz stayed not ready).
func TestLimitWatchReadsAgainAfterAFailedReading(t *testing.T) {
	port := freePorts(t, 1)[0]
	start := func(jetStream bool) *server.Server {
		t.Helper()
		s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true,
			JetStream: jetStream, StoreDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		t.Cleanup(s.Shutdown)
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("server not ready")
		}
		return s
	}
	first := start(true)
	nc, j, err := ejs.Connect(first.ClientURL(), "limits-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	if _, err := j.CreateStream(ctx, js.StreamConfig{Name: "INGEST", Subjects: []string{"edi.ingest.>"}}); err != nil {
		t.Fatal(err)
	}
	need := ejs.Need{Setting: "parse.max_size", Size: 480 << 10, Stream: "INGEST"}
	w, err := ejs.NewLimitWatch(ctx, nc, j, need)
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan error, 16)
	w.WatchReconnects(func(err error) { reports <- err })

	first.Shutdown()
	first.WaitForShutdown()
	second := start(false)
	var unread error
	select {
	case unread = <-reports:
	case <-time.After(30 * time.Second):
		t.Fatal("no report after the reconnect to a server without JetStream")
	}
	if !errors.Is(unread, ejs.ErrLimitsUnread) || !errors.Is(w.Err(), ejs.ErrLimitsUnread) {
		t.Fatalf("reading without JetStream: reported %v, Err %v; want ErrLimitsUnread", unread, w.Err())
	}

	if err := second.EnableJetStream(&server.JetStreamConfig{StoreDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.CheckFor(t, 30*time.Second, 100*time.Millisecond, w.Err)
	select {
	case err := <-reports:
		t.Fatalf("reported again while reading again: %v", err)
	default:
	}
}

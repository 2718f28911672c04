package test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// binary is the edihub binary built for this run.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "edihub-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "edihub")
	build := exec.Command("go", "build", "-o", binary, "../cmd/edihub")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build edihub:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// hubProc runs `edihub serve` under a supervisor loop, as systemd or a
// shell `while true` would: every time it exits it is started again, until
// stop.
type hubProc struct {
	t        testing.TB
	url      string
	httpAddr string
	dataDir  string
	mu       sync.Mutex
	cmd      *exec.Cmd
	starts   int
	exits    []string
	log      bytes.Buffer
	stopped  chan struct{}
	done     chan struct{}
}

// fastConfig keeps e2e runs short: quick redelivery, a low threshold.
const fastConfig = `
hub:
  partitions: 4
  duplicate_window: 1m
  attempts:
    threshold: 3
    ack_wait: 1s
    deadline: 2s
    backoff_base: 20ms
    backoff_max: 100ms
  alerts:
    interval: 1s
`

func startHub(t *testing.T, extraArgs ...string) *hubProc {
	t.Helper()
	return startHubConfig(t, "", extraArgs...)
}

// startHubConfig is startHub with more YAML appended to fastConfig (top
// level sections such as bridge:).
func startHubConfig(t *testing.T, extraYAML string, extraArgs ...string) *hubProc {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "edihub.yaml")
	if err := os.WriteFile(cfg, []byte(fastConfig+extraYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	port, httpPort := freePort(t), freePort(t)
	h := &hubProc{
		t: t, url: fmt.Sprintf("nats://127.0.0.1:%d", port), httpAddr: fmt.Sprintf("127.0.0.1:%d", httpPort),
		dataDir: filepath.Join(dir, "data"), stopped: make(chan struct{}), done: make(chan struct{}),
	}
	args := append([]string{"serve", "--config", cfg, "--data", h.dataDir, "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--http", h.httpAddr, "--log-level", "info"}, extraArgs...)
	go h.supervise(args)
	t.Cleanup(h.stop)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool {
		nc, err := nats.Connect(h.url)
		if err != nil {
			return false
		}
		defer nc.Close()
		j, _ := js.New(nc)
		_, err = j.Stream(context.Background(), "AUDIT") // provisioned last
		return err == nil
	})
	return h
}

func (h *hubProc) supervise(args []string) {
	defer close(h.done)
	for {
		select {
		case <-h.stopped:
			return
		default:
		}
		cmd := exec.Command(binary, args...)
		cmd.Stdout = &lockedWriter{mu: &h.mu, w: &h.log}
		cmd.Stderr = cmd.Stdout
		h.mu.Lock()
		h.cmd = cmd
		h.starts++
		h.mu.Unlock()
		if err := cmd.Start(); err != nil {
			h.t.Errorf("start edihub: %v", err)
			return
		}
		err := cmd.Wait()
		h.mu.Lock()
		h.exits = append(h.exits, fmt.Sprint(err))
		h.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *hubProc) stop() {
	select {
	case <-h.stopped:
		return
	default:
	}
	close(h.stopped)
	h.mu.Lock()
	if h.cmd != nil && h.cmd.Process != nil {
		_ = h.cmd.Process.Signal(os.Interrupt)
	}
	h.mu.Unlock()
	select {
	case <-h.done:
	case <-time.After(15 * time.Second):
		h.mu.Lock()
		_ = h.cmd.Process.Kill()
		h.mu.Unlock()
		<-h.done
	}
	if h.t.Failed() {
		h.mu.Lock()
		h.t.Logf("hub log:\n%s", h.log.String())
		h.mu.Unlock()
	}
}

func (h *hubProc) startCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.starts
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runCLI runs the edihub binary with args and returns stdout, stderr and
// the exit code.
func runCLI(t *testing.T, timeout time.Duration, args ...string) (string, string, int) {
	t.Helper()
	return runBinary(t, timeout, nil, args...)
}

// runBinary is runCLI with the command set up by setup first (nil: as
// it is, in the test's folder and environment).
func runBinary(t *testing.T, timeout time.Duration, setup func(*exec.Cmd), args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	if setup != nil {
		setup(cmd)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run edihub %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// originSeqs maps INGEST sequence → how often it appears in stream (by
// the x-original-seq header), reading every message.
func originSeqs(t testing.TB, j js.JetStream, stream string) map[uint64]int {
	t.Helper()
	out, err := readOriginSeqs(context.Background(), j, stream)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readOriginSeqs is originSeqs as one try that may fail: a poller whose
// server can go down under it (a kill test's killer takes the embedded
// server with it) tries again instead of failing the test.
func readOriginSeqs(ctx context.Context, j js.JetStream, stream string) (map[uint64]int, error) {
	s, err := j.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	out := map[uint64]int{}
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		o, _ := strconv.ParseUint(m.Header.Get("x-original-seq"), 10, 64)
		// the parse stage emits one output per message: count
		// interchanges, not messages
		if m.Header.Get("x-message-ref") != "" && m.Header.Get("x-message-ref") != "1" {
			continue
		}
		out[o]++
	}
	return out, nil
}

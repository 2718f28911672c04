package test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// natsNode is one nats-server process of a loopback cluster.
type natsNode struct {
	t      testing.TB
	bin    string
	name   string
	conf   string
	url    string
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	logMu  sync.Mutex // guards log: the process writes it while a test reads it
	log    bytes.Buffer
}

// startNATSCluster runs n nats-server processes on loopback, each given
// the full route list, with JetStream; they stop when the test ends.
func startNATSCluster(t testing.TB, n int) []*natsNode {
	t.Helper()
	nodes := startNATSProcesses(t, n)
	_, j := jetstreamtest.Connect(t, clusterURL(nodes))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := ejs.WaitReady(ctx, j); err != nil {
		t.Fatalf("the cluster did not become ready: %v", err)
	}
	// A meta leader answers account info before it takes streams: wait
	// until an R3 stream can be made (and remove it).
	jetstreamtest.CheckFor(t, 60*time.Second, 250*time.Millisecond, func() error {
		_, err := j.CreateOrUpdateStream(ctx, js.StreamConfig{Name: "CLUSTER_READY", Subjects: []string{"cluster.ready"}, Replicas: 3, Storage: js.MemoryStorage})
		return err
	})
	_ = j.DeleteStream(ctx, "CLUSTER_READY")
	return nodes
}

// startNATSProcesses starts the n nodes and returns once each takes a
// client connection; the cluster may still be electing its meta leader.
func startNATSProcesses(t testing.TB, n int) []*natsNode {
	t.Helper()
	bin := natsServerBinary(t)
	var routes []string
	clusterPorts := make([]int, n)
	for i := range clusterPorts {
		clusterPorts[i] = freePort(t)
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", clusterPorts[i]))
	}
	var nodes []*natsNode
	for i := range n {
		dir := t.TempDir()
		port := freePort(t)
		name := fmt.Sprintf("nats-%d", i+1)
		conf := fmt.Sprintf(`server_name: %s
listen: 127.0.0.1:%d
max_payload: 33554432
jetstream { store_dir: %q }
cluster {
  name: edi
  listen: 127.0.0.1:%d
  routes: [%s]
}
`, name, port, filepath.Join(dir, "js"), clusterPorts[i], strings.Join(routes, ", "))
		cf := filepath.Join(dir, "server.conf")
		if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		nd := &natsNode{t: t, bin: bin, name: name, conf: cf, url: fmt.Sprintf("nats://127.0.0.1:%d", port)}
		nd.start()
		t.Cleanup(nd.stop)
		nodes = append(nodes, nd)
	}
	for _, nd := range nodes {
		jetstreamtest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
			nc, err := nats.Connect(nd.url)
			if err == nil {
				nc.Close()
			}
			return err
		})
	}
	return nodes
}

func clusterURL(nodes []*natsNode) string {
	var u []string
	for _, n := range nodes {
		u = append(u, n.url)
	}
	return strings.Join(u, ",")
}

func (n *natsNode) start() {
	n.mu.Lock()
	defer n.mu.Unlock()
	cmd := exec.Command(n.bin, "-c", n.conf)
	w := &lockedWriter{mu: &n.logMu, w: &n.log}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("start %s: %v", n.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	n.cmd, n.exited = cmd, done
}

// kill9 kills the process as a power cut would and waits for it to be gone.
func (n *natsNode) kill9() {
	n.mu.Lock()
	cmd, done := n.cmd, n.exited
	n.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

func (n *natsNode) stop() {
	n.mu.Lock()
	cmd, done := n.cmd, n.exited
	n.mu.Unlock()
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// clusterHubConfig is the hub config of the cluster tests: R3, partitions
// pinned, fast fail-over (ack_wait, pinned_ttl, lease_ttl), the drill
// stage on, no sandbox worker (it is not what these tests are about).
const clusterHubConfig = `
nats:
  replicas: 3
cluster:
  lease_ttl: 2s
hub:
  partitions: 8
  drill: true
  duplicate_window: 1m
  attempts:
    threshold: 3
    ack_wait: 2s
    deadline: 10s
    backoff_base: 20ms
    backoff_max: 100ms
  cluster:
    pinned_ttl: 1s
  alerts:
    interval: 20s
  leak_probe:
    interval: 500ms
    growth_window: 20s
    growth_threshold: 5
sandbox:
  enabled: false
`

// startClusterHub runs `edihub serve --nats-url <every node>` under a
// supervisor loop (hubProc), as systemd would, and waits until it is ready.
func startClusterHub(t testing.TB, nodes []*natsNode, extraYAML string) *hubProc {
	t.Helper()
	return startClusterHubConfig(t, nodes, clusterHubConfig+extraYAML)
}

// startClusterHubConfig is startClusterHub with a config of its own.
func startClusterHubConfig(t testing.TB, nodes []*natsNode, config string) *hubProc {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "edihub.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &hubProc{
		t: t, url: clusterURL(nodes), httpAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		dataDir: filepath.Join(dir, "data"), stopped: make(chan struct{}), done: make(chan struct{}),
	}
	go h.supervise([]string{"serve", "--config", cfg, "--data", h.dataDir, "--nats-url", h.url, "--http", h.httpAddr, "--log-level", "info"})
	t.Cleanup(h.stop)
	h.waitReady(t)
	return h
}

// waitReady waits for /readyz; a hub that stays not ready fails the test
// with /readyz's reason and the end of this hub's log (of all the hubs'
// logs printed at the end, CI shows only a part).
func (h *hubProc) waitReady(t testing.TB) {
	t.Helper()
	const wait = 60 * time.Second
	deadline := time.Now().Add(wait)
	err := httpReady(h.httpAddr)
	for ; err != nil && time.Now().Before(deadline); err = httpReady(h.httpAddr) {
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("hub on %s not ready within %v: %v\nthe last lines of its log:\n%s", h.httpAddr, wait, err, h.logTail(40))
	}
}

// logTail is the last n lines of the hub's log (every process it ran).
func (h *hubProc) logTail(n int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	lines := strings.Split(strings.TrimRight(h.log.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// kill9 kills the running process; the supervisor starts it again.
func (h *hubProc) kill9() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cmd != nil && h.cmd.Process != nil {
		_ = h.cmd.Process.Signal(syscall.SIGKILL)
	}
}

// exitCount is how often the process ended so far.
func (h *hubProc) exitCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.exits)
}

// streamLeader names the server that leads stream.
func streamLeader(t testing.TB, j js.JetStream, stream string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := j.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream %s cluster info: %v", stream, err)
	}
	return info.Cluster.Leader
}

// publishUntilStored publishes msg until the cluster acks it: during a
// leader election publishes fail for a moment. The dedupe id makes a
// retried publish land once; the ack names the stored sequence.
func publishUntilStored(ctx context.Context, j js.JetStream, msg *nats.Msg) (uint64, error) {
	var last error
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		ack, err := j.PublishMsg(pctx, msg)
		cancel()
		if err == nil {
			return ack.Sequence, nil
		}
		last = err
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("publish %s: %w (last: %v)", msg.Subject, ctx.Err(), last)
}

// httpReady asks /readyz.
func httpReady(addr string) error {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("readyz: %s %s", resp.Status, b)
	}
	return nil
}

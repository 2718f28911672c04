package jetstream_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// freePorts reserves n loopback ports and frees them for the servers.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var out []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// Three embedded servers, each given the full route list, form a
// JetStream cluster that takes an R3 stream.
func TestEmbeddedServersFormACluster(t *testing.T) {
	ports := freePorts(t, 3)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	var urls []string
	for i, p := range ports {
		s, err := ejs.StartServer(&ejs.ServerOptions{DataDir: t.TempDir(), Listen: "127.0.0.1:-1", Name: fmt.Sprintf("edihub-%d", i+1),
			Cluster: ejs.ClusterOptions{Name: "edi", Listen: fmt.Sprintf("127.0.0.1:%d", p), Routes: routes}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
		urls = append(urls, s.ClientURL())
	}
	nc, j, err := ejs.Connect(strings.Join(urls, ","), "cluster-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ejs.WaitReady(ctx, j); err != nil {
		t.Fatal(err)
	}
	if err := ejs.CheckReplicas(nc, 3); err != nil {
		t.Fatalf("R3 on a three-node cluster: %v", err)
	}
	jetstreamtest.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error { // the meta leader may still be settling
		_, err := ejs.EnsureStream(ctx, j, js.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3})
		return err
	})
	s, err := j.Stream(ctx, "R3")
	if err != nil {
		t.Fatal(err)
	}
	if ci := s.CachedInfo().Cluster; ci == nil || len(ci.Replicas) != 2 {
		t.Fatalf("R3 stream cluster info: %+v, want a leader and two replicas", ci)
	}
}

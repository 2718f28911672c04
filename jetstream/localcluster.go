package jetstream

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// StartLocalCluster starts len(dataDirs) embedded servers in this process
// as one JetStream cluster called name on 127.0.0.1: node i stores under
// dataDirs[i], clients get random ports, routes free ports picked by the
// kernel. It returns the servers and the client URLs of all of them, comma
// separated (what Connect takes). It is the benches' cluster: a site's
// nodes are configured one by one with ServerOptions.Cluster. On an error
// the servers already started are shut down.
func StartLocalCluster(name string, dataDirs []string) ([]*server.Server, string, error) {
	if len(dataDirs) < 2 {
		return nil, "", errors.New("a local cluster needs at least two nodes")
	}
	ports, err := freeRoutePorts(len(dataDirs))
	if err != nil {
		return nil, "", err
	}
	var routes, urls []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	var nodes []*server.Server
	for i, p := range ports {
		s, err := StartServer(&ServerOptions{DataDir: dataDirs[i], Listen: "127.0.0.1:-1", Name: fmt.Sprintf("%s-%d", name, i+1),
			Cluster: ClusterOptions{Name: name, Listen: fmt.Sprintf("127.0.0.1:%d", p), Routes: routes}})
		if err != nil {
			ShutdownAll(nodes)
			return nil, "", fmt.Errorf("node %d of cluster %s: %w", i+1, name, err)
		}
		nodes = append(nodes, s)
		urls = append(urls, s.ClientURL())
	}
	return nodes, strings.Join(urls, ","), nil
}

// ShutdownAll stops servers and waits until each has stopped.
func ShutdownAll(servers []*server.Server) {
	for _, s := range servers {
		s.Shutdown()
	}
	for _, s := range servers {
		s.WaitForShutdown()
	}
}

// freeRoutePorts are n ports free a moment ago: the route list must be
// known before the first node starts, so port -1 cannot serve.
func freeRoutePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a route port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

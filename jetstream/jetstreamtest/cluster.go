package jetstreamtest

import (
	"testing"

	ejs "github.com/edihub/edihub/jetstream"
)

// StartCluster starts n embedded servers as one JetStream cluster
// (jetstream.StartLocalCluster, each node in its own tb.TempDir()), stops
// them when the test ends, and returns every node's client URL, comma
// separated.
func StartCluster(tb testing.TB, n int) string {
	tb.Helper()
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = tb.TempDir()
	}
	nodes, url, err := ejs.StartLocalCluster("bench", dirs)
	if err != nil {
		tb.Fatalf("start a %d-node cluster: %v", n, err)
	}
	tb.Cleanup(func() { ejs.ShutdownAll(nodes) })
	return url
}

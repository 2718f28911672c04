package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The three-node example in deploy/ is a valid config, and says what the
// defaults on a cluster are.
func TestDeployClusterConfigsLoad(t *testing.T) {
	for i := 1; i <= 3; i++ {
		c, err := LoadConfig(filepath.Join("..", "deploy", "cluster", fmt.Sprintf("edihub-%d.yaml", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Complete(); err != nil {
			t.Fatalf("edihub-%d.yaml: %v", i, err)
		}
		if c.NATS.Replicas != 3 || !c.Cluster.IsShared() || c.Counter.Store != "kv" || !c.Hub.Cluster.IsPinned() ||
			c.Hub.Cluster.Replicas != 3 || c.Ledger.Replicas != 3 || len(strings.Split(c.NATS.URL, ",")) != 3 {
			t.Fatalf("edihub-%d.yaml: %+v %+v %+v", i, c.NATS, c.Cluster, c.Counter)
		}
	}
}

func TestClusterDefaultsAndRefusals(t *testing.T) {
	c := DefaultConfig()
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	if c.NATS.Replicas != 1 || c.Cluster.IsShared() || c.Counter.Store != "bbolt" || c.Hub.Cluster.IsPinned() || c.Ledger.Replicas != 1 {
		t.Fatalf("one hub: %+v %+v %+v", c.NATS, c.Cluster, c.Counter)
	}
	for name, mod := range map[string]func(*Config){
		"bbolt on a shared cluster": func(c *Config) { c.NATS.Replicas = 3; c.Counter.Store = "bbolt" },
		"unknown store":             func(c *Config) { c.Counter.Store = "redis" },
		"replicas 7":                func(c *Config) { c.NATS.Replicas = 7 },
		"cluster without a name": func(c *Config) {
			c.NATS.Cluster.Name, c.NATS.Cluster.Listen = "edi", "127.0.0.1:6222"
			c.NATS.Cluster.Routes = []string{"nats-route://a:6222", "nats-route://b:6222", "nats-route://c:6222"}
		},
		"cluster and url": func(c *Config) {
			c.NATS.ServerName, c.NATS.URL = "edihub-1", "nats://x:4222"
			c.NATS.Cluster.Name, c.NATS.Cluster.Listen = "edi", "127.0.0.1:6222"
			c.NATS.Cluster.Routes = []string{"nats-route://a:6222", "nats-route://b:6222", "nats-route://c:6222"}
		},
		"lease ttl": func(c *Config) { c.Cluster.LeaseTTL = 10 },
		"deadline shorter than an election": func(c *Config) {
			c.NATS.Replicas = 3
			c.Hub.Attempts.Deadline = 2 * time.Second
		},
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.Complete(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

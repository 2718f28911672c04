package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/lease"
	"github.com/edihub/edihub/wire"
)

// CounterConfig selects the attempt store (the counter section).
type CounterConfig struct {
	// Store is bbolt (a file in the data folder: one hub) or kv (a
	// replicated JetStream KV bucket shared by the instances of a
	// cluster). Default: bbolt, kv with cluster.shared.
	Store string `yaml:"store"`
	// Bucket is the KV bucket of store kv.
	Bucket string `yaml:"bucket"`
}

// ClusterConfig is how this instance shares the work with others (the
// cluster section).
type ClusterConfig struct {
	// Shared turns on what several instances on one NATS cluster need:
	// partitions owned one instance at a time (hub.cluster.pinned),
	// singletons under leases, shared alert limits, the KV attempt store.
	// Default: on when nats.replicas is above 1.
	Shared *bool `yaml:"shared"`
	// LeaseBucket holds the singletons' leases.
	LeaseBucket string `yaml:"lease_bucket"`
	// LeaseTTL is how long a singleton's lease outlives its instance: the
	// singletons' fail-over time.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// AlertBucket holds the shared alert rate limits.
	AlertBucket string `yaml:"alert_bucket"`
}

// IsShared reports cluster.shared (after SetDefaults).
func (c ClusterConfig) IsShared() bool { return c.Shared != nil && *c.Shared }

// setClusterDefaults resolves the defaults that depend on nats.replicas.
func (c *Config) setClusterDefaults() {
	if c.NATS.Replicas == 0 {
		c.NATS.Replicas = 1
	}
	if c.NATS.ServerName == "" && !c.NATS.Cluster.Enabled() {
		c.NATS.ServerName = "edihub"
	}
	if c.Cluster.Shared == nil {
		shared := c.NATS.Replicas > 1
		c.Cluster.Shared = &shared
	}
	if c.Ledger.Replicas == 0 {
		c.Ledger.Replicas = c.NATS.Replicas
	}
	c.Hub.Cluster.Replicas = c.NATS.Replicas
	if c.Hub.Cluster.Pinned == nil {
		pinned := c.Cluster.IsShared()
		c.Hub.Cluster.Pinned = &pinned
	}
	if c.Counter.Store == "" {
		c.Counter.Store = "bbolt"
		if c.Cluster.IsShared() {
			c.Counter.Store = "kv"
		}
	}
	if c.Counter.Bucket == "" {
		c.Counter.Bucket = wire.DefaultAttemptBucket
	}
	if c.Cluster.LeaseBucket == "" {
		c.Cluster.LeaseBucket = wire.DefaultLeaseBucket
	}
	if c.Cluster.LeaseTTL == 0 {
		c.Cluster.LeaseTTL = 10 * time.Second
	}
	if c.Cluster.AlertBucket == "" {
		c.Cluster.AlertBucket = wire.DefaultAlertLimitBucket
	}
}

// validateCluster refuses the cluster combinations that cannot work.
func (c *Config) validateCluster() error {
	if c.NATS.Replicas < 1 || c.NATS.Replicas > 5 {
		return fmt.Errorf("nats.replicas %d: must be 1 to 5 (3 on a three-node cluster)", c.NATS.Replicas)
	}
	if err := c.NATS.Cluster.Validate(); err != nil {
		return err
	}
	if c.NATS.Cluster.Enabled() && c.NATS.URL != "" {
		return fmt.Errorf("nats.cluster configures the embedded server, but nats.url (or --nats-url) says to use an external one: keep one of the two")
	}
	if c.NATS.Cluster.Enabled() && (c.NATS.ServerName == "" || c.NATS.ServerName == "edihub") {
		return fmt.Errorf("nats.server_name: every node of a cluster needs its own name (e.g. edihub-1)")
	}
	// A stage waits on the ledger and the stores; during a leader election
	// (several seconds) those calls hang, and a deadline shorter than
	// that makes healthy messages time out threshold times in a row: the
	// cluster test quarantined one that way with a 2 s deadline.
	if c.Cluster.IsShared() && c.Hub.Attempts.Deadline != 0 && c.Hub.Attempts.Deadline < minClusterDeadline {
		return fmt.Errorf("hub.attempts.deadline %v: on a cluster it must outlast a JetStream leader election (at least %v), or a fail-over makes healthy messages time out until they are quarantined",
			c.Hub.Attempts.Deadline, minClusterDeadline)
	}
	switch c.Counter.Store {
	case "bbolt":
		if c.Cluster.IsShared() {
			return fmt.Errorf("counter.store bbolt with cluster.shared: each instance would count only its own attempts, and a message that kills instances one after the other would never be quarantined; use counter.store kv")
		}
	case "kv":
	default:
		return fmt.Errorf("counter.store %q: bbolt (one hub) or kv (a cluster)", c.Counter.Store)
	}
	if c.Cluster.LeaseTTL < time.Second {
		return fmt.Errorf("cluster.lease_ttl %v: must be at least 1s", c.Cluster.LeaseTTL)
	}
	return nil
}

// minClusterDeadline is the shortest hub.attempts.deadline on a cluster.
const minClusterDeadline = 10 * time.Second

// attemptStore is the hub's attempt store with its Close.
type attemptStore interface {
	hub.AttemptStore
	Close() error
}

// openAttemptStore opens the attempt store counter.store names.
func openAttemptStore(ctx context.Context, j js.JetStream, cfg *Config) (attemptStore, error) {
	if cfg.Counter.Store == "kv" {
		return counter.OpenKV(ctx, j, &counter.KVOptions{Bucket: cfg.Counter.Bucket, Replicas: cfg.NATS.Replicas, TTL: cfg.Hub.Attempts.CounterTTL,
			Attempt: cfg.Hub.Cluster.OutputAttempt()})
	}
	return counter.Open(filepath.Join(cfg.DataDir, "counter.db"), &counter.Options{TTL: cfg.Hub.Attempts.CounterTTL, Writers: cfg.Hub.Partitions + 1})
}

// sharedParts are what an instance of a cluster shares with the others.
type sharedParts struct {
	singletons hub.Singletons
	limiter    alert.Limiter
	owners     *lease.Membership // nil: not shared
}

// run keeps this instance's membership up until ctx is done.
func (p sharedParts) run(ctx context.Context) {
	if p.owners != nil {
		_ = p.owners.Run(ctx)
	}
}

// register adds the membership gauges to reg.
func (p sharedParts) register(reg prometheus.Registerer, partitions int) {
	if p.owners == nil {
		return
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edihub_cluster_members_count",
			Help: "Hub instances this one sees alive on the cluster (itself included)."},
			func() float64 { return float64(len(p.owners.Members())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edihub_cluster_partitions_preferred_count",
			Help: "Partitions whose preferred owner is this instance."},
			func() float64 {
				n := 0
				for i := range partitions {
					if p.owners.Prefers(i) {
						n++
					}
				}
				return float64(n)
			}),
	)
}

// hubOwners is owners as the hub's interface (a nil pointer must stay a
// nil interface).
func (p sharedParts) hubOwners() hub.PartitionOwners {
	if p.owners == nil {
		return nil
	}
	return p.owners
}

// openShared opens the lease and alert-limit buckets when cluster.shared.
func openShared(ctx context.Context, j js.JetStream, cfg *Config, log zerolog.Logger) (sharedParts, error) {
	var p sharedParts
	if !cfg.Cluster.IsShared() {
		return p, nil
	}
	host, _ := os.Hostname()
	m, err := lease.Open(ctx, j, &lease.Options{Bucket: cfg.Cluster.LeaseBucket, TTL: cfg.Cluster.LeaseTTL,
		Replicas: cfg.NATS.Replicas, Holder: host + ":" + strconv.Itoa(os.Getpid()), Logger: &log})
	if err != nil {
		return p, err
	}
	l, err := alert.OpenKVLimiter(ctx, j, alert.KVLimiterOptions{Bucket: cfg.Cluster.AlertBucket,
		Interval: cfg.Hub.Alerts.Interval, Replicas: cfg.NATS.Replicas})
	if err != nil {
		return p, err
	}
	ms, err := m.Join(ctx, cfg.Hub.Partitions)
	if err != nil {
		return p, err
	}
	log.Info().Str("component", "serve").Str("member", ms.ID()).Strs("members", ms.Members()).
		Msg("sharing the partitions with the other instances on the cluster")
	return sharedParts{singletons: m, limiter: l, owners: ms}, nil
}

package hub

import (
	"errors"
	"fmt"
	"time"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/hub/leakprobe"
	"github.com/edihub/edihub/wire"
)

// Config is the hub's configuration. Every field is documented, with its
// default, in configs/edihub.yaml. The zero value plus setDefaults is a
// working edge hub.
type Config struct {
	// Partitions is the number of INGEST partitions (one consumer each).
	Partitions int `yaml:"partitions"`
	// PartitionConcurrency is how many messages of different partners one
	// partition runs at once (its workers); each partner's run one at a
	// time, in order.
	PartitionConcurrency int `yaml:"partition_concurrency"`
	// PartitionMaxInFlight is how many messages a partition's consumer has
	// out at once (its MaxAckPending): running, and waiting behind their
	// partner's head. No partner holds more than partner_max_in_flight
	// of it (a partner over it spills). Memory in hand is at most this
	// many messages per partition, plus partner_max_in_flight per spilled
	// partner.
	PartitionMaxInFlight int `yaml:"partition_max_in_flight"`
	// PartnerMaxInFlight bounds one partner's share of its partition's
	// window: a partner with more than this many messages in its lane
	// spills to a park consumer of its own (parking.go, spill.go), which
	// hands it this many at a time, so a flood never holds the window
	// its neighbours need. At or above partition_max_in_flight no partner
	// spills.
	PartnerMaxInFlight int `yaml:"partner_max_in_flight"`
	// PartnerPipeline is how many of one partner's messages a partition
	// takes at once: the ones behind the first run their stages while the
	// one before is stored, and settle (outputs, ledger, ack) strictly in
	// order after it (pipeline.go). 1: one at a time. Each takes a worker:
	// the depth used is at most half of partition_concurrency, so that a
	// partner with a slow head leaves workers to its neighbours.
	PartnerPipeline int `yaml:"partner_pipeline"`
	// GroupSettle says when a pipelined partner's head settles the ready
	// messages behind it with it, their outputs one atomic batch (group.go):
	// auto (the default) where the server stages a batch in memory (PARSED
	// replicated, or in memory); always, also on a single-replica file
	// PARSED, where the server syncs a staging file per batch (measured
	// 8-16 ms a batch on a loaded disk, against 0.1-0.4 ms for the same
	// messages pipelined); off. Only with partner_pipeline above 1.
	GroupSettle string `yaml:"group_settle"`
	// Streams names the JetStream streams.
	Streams wire.StreamNames `yaml:"streams"`
	// Attempts tunes attempt counting and poison detection.
	Attempts AttemptConfig `yaml:"attempts"`
	// Retry says how each stage retries transient failures.
	Retry RetryConfig `yaml:"retry"`
	// DLQ holds retention per cause.
	DLQ DLQConfig `yaml:"dlq"`
	// Alerts configures the rate-limited alerter and its sinks.
	Alerts alert.Config `yaml:"alerts"`
	// LeakProbe watches the dead-letter queues.
	LeakProbe leakprobe.Config `yaml:"leak_probe"`
	// DuplicateWindow is the server-side dedupe window of the output
	// streams; it must outlast AckWait so a re-publish after a crash is
	// recognised.
	DuplicateWindow time.Duration `yaml:"duplicate_window"`
	// Drill enables the drill stage (x-drill: panic|hang|exit|error): app
	// wraps the first stage with package drill's middleware, and the hub
	// marks its copies x-drill-mode: on.
	Drill bool `yaml:"drill"`
	// Bulkhead pauses a partner whose failures cross a limit (bulkhead.go).
	Bulkhead BulkheadConfig `yaml:"bulkhead"`
	// Cluster is how instances on a NATS cluster share the work.
	Cluster ClusterConfig `yaml:"cluster"`
	// Retention bounds INGEST and PARSED (storebudget.go).
	Retention RetentionConfig `yaml:"retention"`
	// ClaimCheck stores outputs too large for the server aside
	// (claimcheck.go).
	ClaimCheck ClaimCheckConfig `yaml:"claim_check"`
	// StoreLimit is how many bytes the JetStream store may hold, as serve
	// measured it at start (0: unknown); the DLQ, PARKING and POISON
	// defaults are a share of it and Validate refuses reservations beyond
	// it. StoreLimitSource says where it came from, for the error.
	StoreLimit       int64  `yaml:"-"`
	StoreLimitSource string `yaml:"-"`
}

// AttemptConfig tunes the attempt counter and poison detection.
type AttemptConfig struct {
	// Threshold is how many failed or unexplained attempts make a message
	// poison.
	Threshold int `yaml:"threshold"`
	// Deadline bounds one attempt of the whole pipeline.
	Deadline time.Duration `yaml:"deadline"`
	// AckWait is how long the server waits for an ack before it redelivers;
	// the worker sends progress while a handler runs, so this only bites
	// when the process died. Shorter means faster crash detection.
	AckWait time.Duration `yaml:"ack_wait"`
	// BackoffBase and BackoffMax shape in-place retries (exponential with
	// full jitter).
	BackoffBase time.Duration `yaml:"backoff_base"`
	BackoffMax  time.Duration `yaml:"backoff_max"`
	// MaxAbandoned is how many handlers that ignored their deadline may
	// still be running before the process exits for its supervisor to
	// restart it (a leak must stay bounded).
	MaxAbandoned int `yaml:"max_abandoned"`
	// CounterTTL is how long attempt records are kept after the last
	// failure.
	CounterTTL time.Duration `yaml:"counter_ttl"`
}

// defaultPartnerPipeline is hub.partner_pipeline's default, and
// defaultPartitionConcurrency partition_concurrency's (a partner takes at
// most half the workers, pipelineDepth): sixteen of a partner's messages
// run their stages while the ones before settle, and settle in groups
// (group.go). One partner's 20 000 backlog over TCP (scripts/bench-backlog,
// BENCHMARKS.md, issue 28): one at a time ~2 200 msg/s, 8 deep 3 600, 16
// deep 5 300-5 900, 32 deep 4 700; embedded 4 800, 6 700, 7 100. The
// parse memory budget bounds what the workers hold, not their number.
const (
	defaultPartnerPipeline      = 16
	defaultPartitionConcurrency = 32
)

// defaultPartnerMaxInFlight is hub.partner_max_in_flight's default: a
// quarter of the default window, so three floods in one partition still
// leave a quarter of it to the quiet partners, and 64 in hand are 45 ms
// of work for one partner's serial drain at ~1 400 msg/s (no gap while
// the park consumer refills its lane).
const defaultPartnerMaxInFlight = 64

func (c *Config) setDefaults() {
	if c.Partitions == 0 {
		c.Partitions = 8
	}
	if c.PartitionConcurrency == 0 && c.PartitionMaxInFlight > 0 {
		// a window set below the default workers: the workers follow it
		c.PartitionConcurrency = min(defaultPartitionConcurrency, c.PartitionMaxInFlight)
	}
	setInt(&c.PartitionConcurrency, defaultPartitionConcurrency)
	setInt(&c.PartitionMaxInFlight, 256)
	if c.PartnerPipeline == 0 && c.PartnerMaxInFlight > 0 {
		// a bound set below the default depth: the depth follows it (a
		// pipeline deeper than the bound would spill its own partner)
		c.PartnerPipeline = min(defaultPartnerPipeline, c.PartnerMaxInFlight)
	}
	setInt(&c.PartnerPipeline, defaultPartnerPipeline)
	if c.GroupSettle == "" {
		c.GroupSettle = GroupSettleAuto
	}
	setInt(&c.PartnerMaxInFlight, defaultPartnerMaxInFlight)
	c.Streams.SetDefaults()
	a := &c.Attempts
	setInt(&a.Threshold, 5)
	setDur(&a.Deadline, 30*time.Second)
	setDur(&a.AckWait, 10*time.Second)
	setDur(&a.BackoffBase, 200*time.Millisecond)
	setDur(&a.BackoffMax, 30*time.Second)
	setInt(&a.MaxAbandoned, 4)
	setDur(&a.CounterTTL, 7*24*time.Hour)
	c.Retry.setDefaults()
	c.DLQ.setDefaults(c.StoreLimit)
	c.Alerts.SetDefaults()
	c.LeakProbe.SetDefaults()
	setDur(&c.DuplicateWindow, 10*time.Minute)
	c.Cluster.SetDefaults()
	c.ClaimCheck.SetDefaults()
	c.Bulkhead.SetDefaults()
}

// SetDefaults fills every unset field with its default.
func (c *Config) SetDefaults() { c.setDefaults() }

// Validate reports every setting that cannot work, in one error.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Partitions < 1 || c.Partitions > 1024 {
		bad("partitions: %d, want 1..1024", c.Partitions)
	}
	if c.PartitionConcurrency < 1 || c.PartitionConcurrency > 64 {
		bad("partition_concurrency: %d, want 1..64", c.PartitionConcurrency)
	}
	if c.PartitionMaxInFlight < c.PartitionConcurrency || c.PartitionMaxInFlight > 100000 {
		bad("partition_max_in_flight: %d, want partition_concurrency (%d)..100000", c.PartitionMaxInFlight, c.PartitionConcurrency)
	}
	if c.PartnerPipeline < 1 || c.PartnerPipeline > 64 {
		bad("partner_pipeline: %d, want 1..64", c.PartnerPipeline)
	}
	if c.GroupSettle != GroupSettleAuto && c.GroupSettle != GroupSettleAlways && c.GroupSettle != GroupSettleOff {
		bad("group_settle: %q, want auto, always or off", c.GroupSettle)
	}
	if c.PartnerMaxInFlight < c.PartnerPipeline || c.PartnerMaxInFlight > 100000 {
		bad("partner_max_in_flight: %d, want partner_pipeline (%d)..100000", c.PartnerMaxInFlight, c.PartnerPipeline)
	}
	if c.Attempts.Threshold < 1 {
		bad("attempts.threshold: %d, want >= 1", c.Attempts.Threshold)
	}
	if c.Attempts.Deadline < time.Millisecond {
		bad("attempts.deadline: %v is too short", c.Attempts.Deadline)
	}
	if c.Attempts.AckWait < 100*time.Millisecond {
		bad("attempts.ack_wait: %v is too short", c.Attempts.AckWait)
	}
	if c.Attempts.BackoffMax < c.Attempts.BackoffBase {
		bad("attempts.backoff_max %v is below backoff_base %v", c.Attempts.BackoffMax, c.Attempts.BackoffBase)
	}
	if c.DuplicateWindow < 2*c.Attempts.AckWait {
		bad("duplicate_window %v must be at least twice attempts.ack_wait (%v)", c.DuplicateWindow, c.Attempts.AckWait)
	}
	errs = append(errs, c.Cluster.Validate()...)
	errs = append(errs, c.Retry.validate()...)
	errs = append(errs, c.DLQ.validate()...)
	errs = append(errs, c.Retention.Validate()...)
	errs = append(errs, c.ClaimCheck.Validate()...)
	if c.Bulkhead.Enabled {
		errs = append(errs, c.Bulkhead.Validate()...)
	}
	if err := c.checkStoreBudget(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Alerts.Validate()...)
	if len(errs) > 0 {
		return fmt.Errorf("invalid config: %w", errors.Join(errs...))
	}
	return nil
}

func setStr(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

func setInt(p *int, v int) {
	if *p == 0 {
		*p = v
	}
}

func setDur(p *time.Duration, v time.Duration) {
	if *p == 0 {
		*p = v
	}
}

package hub

import (
	"context"
	"fmt"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/wire"
)

// ClusterConfig is how a hub shares the work with other instances on a
// NATS cluster (the hub.cluster section).
type ClusterConfig struct {
	// Replicas of every stream the hub provisions; serve copies it from
	// nats.replicas (1 on one server, 3 on a cluster).
	Replicas int `yaml:"-"`
	// Pinned makes each partition's consumer a priority group with a
	// pinned client: several instances pull, the server delivers to one
	// of them at a time and moves the pin when that one stops pulling.
	// Needs nats-server 2.11 or newer. serve turns it on with nats.replicas
	// above 1.
	Pinned *bool `yaml:"pinned"`
	// PinnedTTL is how long the server keeps a pin on an instance that has
	// stopped pulling (died); the partition moves after that, and its
	// message in flight after attempts.ack_wait.
	PinnedTTL time.Duration `yaml:"pinned_ttl"`
}

func (c *ClusterConfig) setDefaults() {
	setInt(&c.Replicas, 1)
	setDur(&c.PinnedTTL, 5*time.Second)
}

// outputTimeout bounds the wait for the acks of an interchange's outputs.
// On a replicated cluster an ack that has not come in 10 s was most likely
// lost with a stream leader that died; publishing again is safe (the
// dedupe ids drop what was stored) and holds the partition up a third as
// long as the single-server 30 s.
func (c ClusterConfig) outputTimeout() time.Duration {
	if c.Replicas > 1 {
		return 10 * time.Second
	}
	return 30 * time.Second
}

// IsPinned reports whether partitions are owned through pinned clients.
func (c ClusterConfig) IsPinned() bool { return c.Pinned != nil && *c.Pinned }

func (c *ClusterConfig) validate() []error {
	var errs []error
	if c.Replicas < 1 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("replicas: %d, want 1..5", c.Replicas))
	}
	if c.IsPinned() && c.PinnedTTL < time.Second {
		errs = append(errs, fmt.Errorf("cluster.pinned_ttl: %v, want at least 1s (the client pulls every few seconds)", c.PinnedTTL))
	}
	return errs
}

// pin sets the consumer's priority group when partitions are pinned.
func (h *Hub) pin(c *js.ConsumerConfig) {
	if !h.cfg.Cluster.IsPinned() {
		return
	}
	c.PriorityPolicy = js.PriorityPolicyPinned
	c.PriorityGroups = []string{wire.PartitionGroup}
	c.PinnedTTL = h.cfg.Cluster.PinnedTTL
}

// pullOptions are the pull options of a source; pinned consumers need the
// group named on every pull.
func (h *Hub) pullOptions() []js.PullMessagesOpt {
	o := []js.PullMessagesOpt{js.PullMaxMessages(pullBatch), js.PullExpiry(pullExpiry)}
	if h.cfg.Cluster.IsPinned() {
		o = append(o, js.PullPriorityGroup(wire.PartitionGroup))
	}
	return o
}

// PartitionOwners says which partitions this instance should work.
type PartitionOwners interface {
	Prefers(partition int) bool
}

// ownerCheckEvery is how often a partition worker asks whether it is
// still (or again) the preferred owner: a cheap local read.
const ownerCheckEvery = 250 * time.Millisecond

// runOwned works a partition while this instance is its preferred owner.
// When another instance becomes it (one joined), the worker finishes the
// message in hand, stops pulling and unpins itself, so the server pins
// the new owner at once instead of after pinned_ttl. Order holds across
// the hand-over: the consumer has one message out at a time.
func (s *source) runOwned(ctx context.Context) error {
	t := time.NewTicker(ownerCheckEvery)
	defer t.Stop()
	for {
		if s.h.owners.Prefers(s.partition) {
			if err := s.pull(ctx, func() bool { return !s.h.owners.Prefers(s.partition) }); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return nil
			}
			s.unpin(ctx)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// unpin lets the server pin another instance now, if this one still
// holds the pin.
func (s *source) unpin(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := s.h.js.Consumer(ctx, s.h.cfg.Streams.Ingest, s.name)
	if err != nil {
		return
	}
	for _, g := range c.CachedInfo().PriorityGroups {
		if g.Group == wire.PartitionGroup && g.PinnedClientID != "" && g.PinnedClientID == s.pinID {
			st, err := s.h.js.Stream(ctx, s.h.cfg.Streams.Ingest)
			if err == nil {
				err = st.UnpinConsumer(ctx, s.name, wire.PartitionGroup)
			}
			s.h.log.Info().Err(err).Str("consumer", s.name).Msg("partition handed over to its preferred owner")
		}
	}
}

// Singletons run a job on one instance of a cluster at a time (a lease
// with fencing, see package lease). Run blocks until ctx is done, running
// job whenever this instance holds the lease name; job's context ends when
// the lease is lost. fence reports, before an action with an effect
// outside (an alert), whether the lease is still held.
type Singletons interface {
	Run(ctx context.Context, name string, job func(ctx context.Context, fence func(context.Context) error)) error
}

// singleton runs job under the named lease, or directly without Singletons.
func (h *Hub) singleton(name string, job func(ctx context.Context, fence func(context.Context) error) error) func(context.Context) error {
	if h.singletons == nil {
		return func(ctx context.Context) error {
			return job(ctx, func(context.Context) error { return nil })
		}
	}
	return func(ctx context.Context) error {
		return h.singletons.Run(ctx, name, func(ctx context.Context, fence func(context.Context) error) {
			if err := job(ctx, fence); err != nil && ctx.Err() == nil {
				h.log.Error().Err(err).Str("singleton", name).Msg("singleton job stopped; it starts again when this instance holds the lease")
			}
		})
	}
}

// unfenced adapts a job without outside effects to singleton.
func unfenced(job func(context.Context) error) func(context.Context, func(context.Context) error) error {
	return func(ctx context.Context, _ func(context.Context) error) error { return job(ctx) }
}

// notePin watches the pin of a partition: when the server moves it to
// this instance (a new pin id), another instance may have worked the
// partition's partners meanwhile, so the ledger is told before the
// message is processed (it reads what was recorded since). Also the first
// time: the ledger's index was read when this instance first asked it,
// perhaps before another instance recorded this partition's interchanges.
func (s *source) notePin(pinID, partner string) {
	if s.partition < 0 || !s.h.cfg.Cluster.IsPinned() {
		return
	}
	if pinID != "" && pinID != s.pinID {
		if s.pinID != "" || len(s.partners) > 0 {
			s.h.log.Info().Str("consumer", s.name).Msg("partition pinned to this instance again: the ledger reads what others recorded meanwhile")
		}
		if s.h.forgetPartners != nil {
			ps := make([]string, 0, len(s.partners))
			for p := range s.partners {
				ps = append(ps, p)
			}
			s.h.forgetPartners(ps)
		}
		clear(s.partners)
		s.pinID = pinID
		s.h.met.PinChanges.Inc()
	}
	if partner != "" {
		s.partners[partner] = struct{}{}
	}
}

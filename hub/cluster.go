package hub

import (
	"context"
	"time"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// ClusterConfig is how a hub shares the work with other instances on a
// NATS cluster (the hub.cluster section): jetstream.Sharing, with the
// partition consumers' priority group wire.PartitionGroup.
type ClusterConfig = ejs.Sharing

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
// the hand-over: this instance finishes what it has in hand, and the new
// owner's lanes wait until what was out is back in its hand (armBarrier).
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
//
// It reports whether the pin is new: the lanes then wait for what another
// instance had out (armBarrier).
func (s *source) notePin(pinID, partner string) (moved bool) {
	if s.partition < 0 || !s.h.cfg.Cluster.IsPinned() {
		return false
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
		s.pinNow.Store(pinID)
		s.h.met.PinChanges.Inc()
		moved = true
	}
	if partner != "" {
		s.partners[partner] = struct{}{}
	}
	return moved
}

package hub

import (
	"context"
	"slices"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/wire"
)

// With hub.cluster.pinned, a park consumer is a priority group with a
// pinned client, as the partition's consumer is: when the partition moves,
// the instance it leaves may still be draining the park for a moment (it
// sees the move on its own next look), and a drain of the new owner that
// fetched beside it would take the park's later messages while the old
// one runs earlier ones, which no hold can put back in order. Pinned, the
// server hands the park's messages to one instance only: the new owner's
// drain gets nothing until the old one has stopped and unpinned it (or
// its pin ran out), and then holds what it fetches until what the old one
// had out is back (lanes.DrainHold). A park made before parks were pinned has
// no group and drains as before.

// parkGroup is the priority group a park consumer's drain names on each
// fetch: "" when the consumer is not pinned.
func parkGroup(cfg js.ConsumerConfig) string {
	if cfg.PriorityPolicy == js.PriorityPolicyPinned && slices.Contains(cfg.PriorityGroups, wire.PartitionGroup) {
		return wire.PartitionGroup
	}
	return ""
}

// fetchOpts are a drain's fetch options: the group of a pinned park.
func (p *park) fetchOpts(wait time.Duration) []js.FetchOpt {
	o := []js.FetchOpt{js.FetchMaxWait(wait)}
	if p.group != "" {
		o = append(o, js.FetchPriorityGroup(p.group))
	}
	return o
}

// notePin remembers the server's pin of this instance on a pinned park
// (a fetched message's Nats-Pin-Id): the drain's own. It reports whether
// the pin is new: the instance that had the park before (or this one's
// drain from before a restart) may still have messages out, and the
// drain holds what it fetches until those are back (lanes.DrainHold), as at
// its start — a drain may have started long before the pin came.
func (p *park) notePin(msg js.Msg) (fresh bool) {
	if p.group == "" {
		return false
	}
	id := wire.PinID(msg.Headers())
	if id == "" || id == p.pinID {
		return false
	}
	p.pinID = id
	return true
}

// unpinParks lets another instance's drain have the stopped drains' parks
// now rather than after pinned_ttl, where this instance still holds the
// pin (the drains have ended: pinID is theirs no more).
func (pk *parks) unpinParks() {
	pk.mu.Lock()
	var pinned []*park
	for _, p := range pk.by {
		if p.group != "" && p.pinID != "" {
			pinned = append(pinned, p)
		}
	}
	pk.mu.Unlock()
	if len(pinned) == 0 {
		return
	}
	h := pk.s.h
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := h.js.Stream(ctx, h.cfg.Streams.Ingest)
	if err != nil {
		return // the pin runs out after pinned_ttl
	}
	for _, p := range pinned {
		info, err := p.cons.Info(ctx)
		if err != nil {
			continue
		}
		for _, g := range info.PriorityGroups {
			if g.Group == p.group && g.PinnedClientID == p.pinID {
				err := st.UnpinConsumer(ctx, p.name, p.group)
				h.log.Info().Err(err).Str("consumer", p.name).Msg("park consumer unpinned: another instance may drain it now")
			}
		}
	}
}

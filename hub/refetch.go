package hub

import (
	"context"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/hub/lanes"
	"github.com/edihub/edihub/wire"
)

// Re-fetching a nak'd head that is late. A lane that waits for its nak'd
// head (lanes.Done with stays) holds its partner until the server hands
// the head back, normally right after the nak's delay. When the
// connection that carried the nak (or the redelivery) is lost, or the
// consumer's leader moved and with it the pin, the head does not come back
// on that timetable: a lost nak leaves it out until its ack wait runs out,
// a lost redelivery until another ack wait, and a pin that moved hands it
// to another instance, so it never comes back here. Waiting out
// 2 x (delay + ack_wait) for it held the partner for that long.
//
// So a head that is late (a second past its nak's delay), and every head
// waited for when the connection reconnected or the pull's heartbeats
// stopped (lanes.Lost), is asked for again at once (lanes.LateHeads, once
// a second while it stays late):
//   - when the partition's pin is another instance's (consumer info), this
//     instance hands back what it holds and does not run (lanes.HandBack): each
//     queued message is nak'd in stream order and its lane forgets its
//     wait, so the pin holder gets the partner's messages in order (its
//     barrier holds them until what was out is back in its hand);
//   - otherwise the head is nak'd again (to its delivery's reply subject,
//     now on the live connection): the server redelivers it at once. A nak of a
//     message the server has already redelivered or that was acked is
//     ignored or answered with one more delivery, which the lanes take as
//     a redelivery of what they hold (never run twice side by side).
//
// Order is kept either way: nothing behind the head runs before it; the
// lane still gives up only at its waitTill (the head was deleted).

// refetch asks again for the late heads of the source's lanes (see the
// top of this file).
func (s *source) refetch(ln *lanes.Lanes, now time.Time) {
	heads := ln.LateHeads(now)
	if len(heads) == 0 {
		return
	}
	if s.partition >= 0 && s.h.cfg.Cluster.IsPinned() {
		pinned, ok := s.pinnedElsewhere()
		if !ok {
			return // no answer (an election): asked again a second later
		}
		if pinned {
			back := ln.HandBack()
			for _, m := range back {
				_ = m.Nak()
			}
			s.gauge(ln)
			s.h.met.Refetches.WithLabelValues("handed-back").Add(float64(len(back)))
			s.h.log.Warn().Str("consumer", s.name).Int("messages", len(back)).
				Msg("the partition is pinned to another instance: what waited here is handed back to it, in order")
			return
		}
	}
	for _, m := range heads {
		s.nakAgain(m)
	}
	s.h.met.Refetches.WithLabelValues("nak-again").Add(float64(len(heads)))
	s.h.log.Warn().Str("consumer", s.name).Int("lanes", len(heads)).
		Msg("a message retried in place is late (its nak or redelivery was lost with a connection?): asked for again")
}

// nakAgain sends a nak for m once more. Through the handle it cannot be:
// nats.go sends one ack or nak per delivery and refuses the second, so it
// goes to the delivery's reply subject, as the handle's own nak did, on the
// connection as it is now.
func (s *source) nakAgain(m js.Msg) {
	if s.h.nc == nil || m.Reply() == "" {
		return
	}
	_ = s.h.nc.Publish(m.Reply(), []byte("-NAK"))
}

// pinnedElsewhere asks the consumer's leader whether the partition's pin
// is another instance's. ok is false without an answer.
func (s *source) pinnedElsewhere() (elsewhere, ok bool) {
	ctx, cancel := context.WithTimeout(s.h.runCtx, infoTry)
	defer cancel()
	info, err := s.cons.Info(ctx)
	if err != nil {
		return false, false
	}
	mine := s.currentPin()
	for _, g := range info.PriorityGroups {
		if g.Group == wire.PartitionGroup && g.PinnedClientID != "" {
			return g.PinnedClientID != mine, true
		}
	}
	return false, true
}

// reconnects counts the hub connection's reconnects: a change says what
// was sent on the connection before may be lost.
func (s *source) reconnects() uint64 {
	if s.h.nc == nil {
		return 0
	}
	return s.h.nc.Stats().Reconnects
}

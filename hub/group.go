package hub

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Group settle (hub.partner_pipeline > 1). When a partner's head settles
// and the messages right behind it ran their stages ahead and wait for
// their turn, ready to be acked (plain first deliveries: never a
// redelivery, a suspect or a retry), they settle together: their outputs
// go to PARSED as one JetStream atomic batch (all stored or none, each
// with its own dedupe id), their ledger records are started together (the
// ledger groups them into one entry), then everything is acked in stream
// order. One round trip for the lot instead of one per message.
//
// Nothing is acked before the group's outputs and records are stored, and
// a batch stores all or nothing, so per-partner order holds: a group that
// fails (a store fault, a refused batch, a dedupe id stored before — the
// redelivery of a group whose acks were lost) is settled from the head one
// at a time, the path without groups, each output deduplicated on its
// own. A server or stream without atomic publish is found at the first
// group, logged once, and every group after settles one at a time. Each
// member keeps its worker and its in-flight table row until its turn,
// where it finds itself settled.

// groupMember is a message that ran ahead, finished its stages and waits
// for its turn, offered to the head's group (pipeTurn.ready).
type groupMember struct {
	d        *delivery
	m        *Message
	rec      counter.Record
	attempts int
	// settled is set by the head that settled it (read by its worker
	// after its turn, which the head gives after it)
	settled bool
}

// hub.group_settle's settings.
const (
	GroupSettleAuto   = "auto"
	GroupSettleAlways = "always"
	GroupSettleOff    = "off"
)

// groupSettle is the hub's state of group settles.
type groupSettle struct {
	off      atomic.Bool  // off, or the server or PARSED takes no atomic batches (or stages them on disk, auto)
	checked  atomic.Bool  // PARSED's configuration was read (groupsWorth)
	inFlight atomic.Int32 // batches with the server
}

// groupsWorth says whether a stream of this configuration is worth atomic
// batches under setting (hub.group_settle), and if not, why. A
// single-replica file stream stages each batch in a file store of its
// own, synced before the commit: slower than the round trips it saves
// (BenchmarkPublishGroup in package jetstream).
func groupsWorth(setting string, c js.StreamConfig) (bool, string) {
	switch {
	case setting == GroupSettleOff:
		return false, "hub.group_settle is off"
	case !c.AllowAtomicPublish:
		return false, "the stream does not allow atomic publish"
	case setting == GroupSettleAuto && c.Replicas <= 1 && c.Storage == js.FileStorage:
		return false, "a single-replica file stream syncs a staging file per atomic batch, slower than the round trips a group saves (hub.group_settle always overrides)"
	}
	return true, ""
}

// checkGroups reads PARSED's configuration once and turns group settles
// off, said once, where groupsWorth says so; false: off.
func (h *Hub) checkGroups() bool {
	gs := &h.groups
	if gs.checked.Load() {
		return !gs.off.Load()
	}
	ctx, cancel := context.WithTimeout(h.runCtx, 5*time.Second)
	defer cancel()
	st, err := h.js.Stream(ctx, h.cfg.Streams.Parsed)
	if err != nil {
		return false // asked again at the next group
	}
	ok, why := groupsWorth(h.cfg.GroupSettle, st.CachedInfo().Config)
	if !ok && gs.off.CompareAndSwap(false, true) {
		h.log.Info().Str("stream", h.cfg.Streams.Parsed).Str("why", why).
			Msg("a partner's pipelined messages settle one at a time, not in groups")
	}
	gs.checked.Store(true)
	return ok
}

// maxGroupsInFlight stays below the server's 50 open atomic batches per
// stream: a head that finds them taken settles alone.
const maxGroupsInFlight = 32

// parsedPrefix is the subjects of PARSED, the one stream batched.
var parsedPrefix = strings.TrimSuffix(wire.ParsedAll, ">")

// ready offers g, a run ahead whose stages succeeded, to the group of the
// head it waits for; l.mu orders it before the head's look.
func (t *pipeTurn) ready(g *groupMember) {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	t.m.ready = g
}

// readyBehind returns the members offered right behind m, in stream order,
// while m is its lane's first taken message (every earlier one settled):
// at most max, up to the first that is not ready.
func (l *lanes) readyBehind(m *heldMsg, max int) []*groupMember {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := m.lane
	if len(ln.taken) < 2 || ln.taken[0] != m {
		return nil
	}
	var out []*groupMember
	for _, t := range ln.taken[1:] {
		if t.ready == nil || t.aborted || len(out) >= max {
			break
		}
		out = append(out, t.ready)
	}
	return out
}

// groupable says m may settle in a group: it has outputs, all to PARSED,
// and whatever it records is named (a member is never grouped with an
// earlier one that records the same interchange).
func groupable(m *Message) bool {
	if len(m.outputs) == 0 || (len(m.commits) > 0 || len(m.rechecks) > 0) && m.names == nil {
		return false
	}
	for _, o := range m.outputs {
		if !strings.HasPrefix(o.Subject, parsedPrefix) {
			return false
		}
	}
	return true
}

// groupOf picks the members that settle with the head m: groupable, not
// naming what one before them names, still no duplicate of what settled
// before the head (their rechecks), outputs that fit, within the batch
// limit. It stops at the first that does not qualify: that one and those
// behind it settle at their own turns.
func (h *Hub) groupOf(m *Message, ready []*groupMember) []*groupMember {
	if !groupable(m) {
		return nil
	}
	seen := map[string]bool{}
	named := func(x *Message) bool { // false: x names what one before it does
		if x.names == nil {
			return true
		}
		for _, n := range x.names() {
			if seen[n] {
				return false
			}
			seen[n] = true
		}
		return true
	}
	named(m)
	outs := len(m.outputs)
	for i, g := range ready {
		ok := groupable(g.m) && outs+len(g.m.outputs) <= ejs.MaxAtomicBatch && named(g.m) && h.outputsFit(g.d, g.m.outputs) == nil
		for _, r := range g.m.rechecks {
			if !ok {
				break
			}
			ok = r.check() == nil
		}
		if !ok {
			return ready[:i]
		}
		outs += len(g.m.outputs)
	}
	return ready
}

// settleGroup settles the head d (its stages succeeded, its outputs fit)
// together with the ready messages behind it, and reports whether it did;
// false: the head settles alone (succeed), the others at their turns.
func (h *Hub) settleGroup(d *delivery, m *Message, attempts int) bool {
	gs := &h.groups
	if d.turn == nil || gs.off.Load() || d.meta.NumDelivered != 1 || d.solo || !h.checkGroups() {
		return false
	}
	if v := h.nc.ConnectedServerVersion(); !ejs.AtomicServer(v) {
		h.groupFailed(d, 0, fmt.Errorf("nats-server %s: %w", v, ejs.ErrAtomicUnsupported))
		return false
	}
	members := h.groupOf(m, d.turn.l.readyBehind(d.turn.m, ejs.MaxAtomicBatch))
	if len(members) == 0 {
		return false
	}
	if gs.inFlight.Add(1) > maxGroupsInFlight {
		gs.inFlight.Add(-1)
		return false
	}
	defer gs.inFlight.Add(-1)
	all := append([]*groupMember{{d: d, m: m, attempts: attempts}}, members...)
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.Cluster.OutputTimeout())
	defer cancel()
	attempt := h.cfg.Cluster.OutputAttempt()
	var outs []*nats.Msg
	var ids []string
	var starts []func() func(context.Context) error
	var waits []func(context.Context) error
	for _, g := range all {
		for _, start := range g.m.commits {
			starts, waits = append(starts, start), append(waits, start())
		}
		for i, o := range g.m.outputs {
			outs, ids = append(outs, o), append(ids, wire.OutputMsgID(g.d.origStream, g.d.origSeq, i))
		}
	}
	bctx, bcancel := ctx, context.CancelFunc(func() {})
	if attempt > 0 {
		bctx, bcancel = context.WithTimeout(ctx, attempt)
	}
	err := ejs.PublishAtomic(bctx, h.nc, outs, func(i int) string { return ids[i] })
	bcancel()
	for i := range waits {
		if err != nil {
			break
		}
		err = awaitCommit(ctx, attempt, starts[i], waits[i])
	}
	if err != nil {
		h.groupFailed(d, len(all), err)
		return false
	}
	h.pub.OK()
	for _, g := range all { // in stream order
		if err := g.d.msg.Ack(); err != nil {
			h.log.Warn().Err(err).Uint64("seq", g.d.origSeq).Msg("ack failed; the server will redeliver and outputs dedupe")
		}
		h.met.OKMessages.Inc()
		h.met.OKAttempts.Observe(float64(g.attempts))
		h.processed.Add(1)
		h.forget(g.d)
	}
	for _, g := range members {
		g.settled = true
		if h.bulk != nil {
			h.bulk.observe(g.d.partner, false) // the head's is observed by settle
		}
	}
	h.met.GroupedMessages.Add(float64(len(all)))
	h.met.GroupSize.Observe(float64(len(all)))
	return true
}

// groupFailed says why a group settles one at a time; a server or stream
// that takes no atomic batches is said once, and no group is tried again.
func (h *Hub) groupFailed(d *delivery, n int, err error) {
	reason := "failed"
	switch {
	case ejs.AtomicUnavailable(err):
		reason = "unavailable"
		if h.groups.off.CompareAndSwap(false, true) {
			h.log.Warn().Err(err).Str("stream", h.cfg.Streams.Parsed).
				Msg("the server or the stream takes no atomic batches: a partner's pipelined messages settle one at a time (nats-server 2.12 or later and allow_atomic on the stream group them)")
		}
	case ejs.AtomicDuplicate(err):
		reason = "duplicate"
	}
	h.met.GroupFallbacks.WithLabelValues(reason).Inc()
	h.log.Debug().Err(err).Str("partner", d.partner).Uint64("seq", d.origSeq).Int("messages", n).Str("reason", reason).
		Msg("group settle failed, nothing of it stored; settled from the head one at a time")
}

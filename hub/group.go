package hub

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/hub/lanes"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Group settle (hub.partner_pipeline > 1). When a partner's head settles
// and the messages right behind it ran their stages ahead and wait for
// their turn, ready to be acked (plain first deliveries: never a
// redelivery, a suspect or a retry), they settle together: their outputs
// go to PARSED as one JetStream batch (each with its own dedupe id), their
// ledger records are started together (the ledger groups them into one
// entry), then everything is acked in stream order. One round trip for
// the lot instead of one per message.
//
// The batch is atomic (all stored or none, staged by the server) on a
// replicated or memory PARSED, and fast ("gap: fail": stored as it
// arrives, and what is stored is always a first part of the batch) on a
// single-replica file PARSED, where an atomic batch costs a synced
// staging file (groupBatchFor).
//
// Nothing is acked before the group's outputs and records are stored,
// and a batch stores all of it, nothing or a first part, so per-partner
// order holds: a group that fails (a store fault, a refused batch, a
// dedupe id stored before — the redelivery of a group whose acks were
// lost) is settled from the head one at a time, the path without groups,
// each output deduplicated on its own (what a first part stored is
// answered as a duplicate). A server or stream without the batch picked
// is found at the first group, logged once, and every group after settles
// one at a time. Each member keeps its worker and its in-flight table row
// until its turn, where it finds itself settled.

// groupMember is a message that ran ahead, finished its stages and waits
// for its turn, offered to the head's group (lanes.Turn.Ready).
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
	off       atomic.Bool  // off, or PARSED takes no batch worth a group
	final     atomic.Bool  // off for good: hub.group_settle off, no pipeline, or the hub stopping
	checked   atomic.Bool  // PARSED's configuration was read (checkGroups)
	checkedAt atomic.Int64 // when, in Unix nanoseconds
	reading   atomic.Bool  // a read again runs (in the background)
	inFlight  atomic.Int32 // batches with the server

	readMu sync.Mutex // one read of PARSED's configuration at a time (readGroups)
	mu     sync.Mutex // kind and fast: readGroups, publish, close
	kind   groupBatch // set before checked
	fast   *ejs.FastBatcher
}

func (k groupBatch) String() string {
	switch k {
	case batchAtomic:
		return "atomic"
	case batchFast:
		return "fast"
	}
	return "none"
}

// groupRecheck is how often PARSED's configuration is read again: an
// operator may change it while the hub runs (a limit with discard new
// makes fast batches unsafe, allow_batched or allow_atomic may come or
// go), and the groups follow within this long, not at the next start.
var groupRecheck = 30 * time.Second

// groupBatch is how a group's outputs go to PARSED.
type groupBatch int

const (
	batchNone   groupBatch = iota
	batchAtomic            // all or none, staged by the server (jetstream.PublishAtomic)
	batchFast              // a prefix, stored as it arrives (jetstream.FastBatcher)
)

// groupBatchFor picks how a group's outputs go to a stream of
// configuration c on a server of version under setting
// (hub.group_settle), or batchNone and why no group is worth it. A
// single-replica file stream stages each atomic batch in a file store of
// its own, synced before the commit, slower than the round trips a group
// saves; a fast batch is not staged (BenchmarkPublishGroup in package
// jetstream). A replicated or memory stream stages atomic batches in
// memory and commits one as one entry: atomic there.
func groupBatchFor(setting string, c js.StreamConfig, version string) (groupBatch, string) {
	atomicOK := c.AllowAtomicPublish && ejs.AtomicServer(version)
	fastOK := c.AllowBatchPublish && ejs.FastServer(version) && prefixOnly(c)
	switch {
	case setting == GroupSettleOff:
		return batchNone, "hub.group_settle is off"
	case c.Replicas <= 1 && c.Storage == js.FileStorage && fastOK:
		return batchFast, ""
	case c.Replicas <= 1 && c.Storage == js.FileStorage && atomicOK && setting == GroupSettleAlways:
		return batchAtomic, ""
	case c.Replicas <= 1 && c.Storage == js.FileStorage && atomicOK:
		return batchNone, "a single-replica file stream syncs a staging file per atomic batch, slower than the round trips a group saves, and it takes no fast batches (nats-server 2.14 or later and allow_batched on the stream; hub.group_settle always uses atomic batches anyway)"
	case atomicOK:
		return batchAtomic, ""
	case fastOK:
		return batchFast, ""
	}
	return batchNone, "the server or the stream takes neither atomic batches (nats-server 2.12, allow_atomic) nor fast batches (nats-server 2.14, allow_batched)"
}

// prefixOnly says a fast batch into a stream of configuration c stores a
// first part of it whatever fails. The server ends a "gap: fail" batch at
// a message it refuses before storing (a gap, the server's or the
// account's limits) and a file store's write error stays until a
// restart, but a stream limit with discard new refuses one message and
// may take a smaller or a later one after it. The hub's PARSED discards
// old (EnsureStream sets it back at each start).
func prefixOnly(c js.StreamConfig) bool {
	return c.Discard == js.DiscardOld && !c.DiscardNewPerSubject || c.MaxMsgs <= 0 && c.MaxBytes <= 0 && c.MaxMsgsPerSubject <= 0
}

// checkGroups says whether a group may settle now: PARSED's
// configuration was read, at the first group and then again in the
// background every groupRecheck, and takes a batch worth a group.
func (h *Hub) checkGroups() bool {
	gs := &h.groups
	if gs.final.Load() {
		return false
	}
	if !gs.checked.Load() {
		return h.readGroups(false)
	}
	if time.Since(time.Unix(0, gs.checkedAt.Load())) >= groupRecheck && gs.reading.CompareAndSwap(false, true) {
		go func() {
			defer gs.reading.Store(false)
			h.readGroups(true)
		}()
	}
	return !gs.off.Load()
}

// readGroups reads PARSED's configuration and picks the groups' batch, or
// turns group settles off; a change is said once. again: a read after the
// first (its failure keeps what was picked, tried again groupRecheck
// later). false: off.
func (h *Hub) readGroups(again bool) bool {
	gs := &h.groups
	gs.readMu.Lock()
	defer gs.readMu.Unlock()
	if !again && gs.checked.Load() {
		return !gs.off.Load() // read while this one waited
	}
	ctx, cancel := context.WithTimeout(h.runCtx, 5*time.Second)
	defer cancel()
	st, err := h.js.Stream(ctx, h.cfg.Streams.Parsed)
	if err != nil {
		gs.checkedAt.Store(time.Now().UnixNano())
		return again && !gs.off.Load() // the first: asked again at the next group
	}
	kind, why := groupBatchFor(h.cfg.GroupSettle, st.CachedInfo().Config, h.nc.ConnectedServerVersion())
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.final.Load() {
		return false // stopped meanwhile
	}
	if kind == batchFast && gs.fast == nil {
		if gs.fast, err = ejs.NewFastBatcher(h.nc); err != nil {
			gs.checkedAt.Store(time.Now().UnixNano())
			return again && !gs.off.Load()
		}
	}
	changed := !gs.checked.Load() || kind != gs.kind
	gs.kind = kind
	gs.off.Store(kind == batchNone) // a batch refused as unavailable is tried again too
	gs.checkedAt.Store(time.Now().UnixNano())
	gs.checked.Store(true)
	switch {
	case changed && kind == batchNone:
		h.log.Info().Str("stream", h.cfg.Streams.Parsed).Str("why", why).
			Msg("a partner's pipelined messages settle one at a time, not in groups")
	case changed && again:
		h.log.Info().Str("stream", h.cfg.Streams.Parsed).Str("batch", kind.String()).
			Msg("PARSED's configuration changed: a partner's pipelined messages settle in groups")
	}
	return kind != batchNone
}

// close ends the fast batches' answers (Run's end).
func (gs *groupSettle) close() {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.fast != nil {
		gs.fast.Close()
		gs.fast = nil
	}
	gs.final.Store(true)
	gs.off.Store(true)
}

// publish sends a group's outputs as one batch of the kind checkGroups
// picked.
func (gs *groupSettle) publish(ctx context.Context, nc *nats.Conn, outs []*nats.Msg, ids []string) error {
	idOf := func(i int) string { return ids[i] }
	gs.mu.Lock()
	kind, fast := gs.kind, gs.fast
	gs.mu.Unlock()
	if kind == batchFast {
		if fast == nil {
			return errors.New("group settle: the hub is stopping")
		}
		return fast.Publish(ctx, outs, idOf)
	}
	return ejs.PublishAtomic(ctx, nc, outs, idOf)
}

// maxGroupsInFlight stays below the server's 50 open atomic batches per
// stream: a head that finds them taken settles alone.
const maxGroupsInFlight = 32

// parsedPrefix is the subjects of PARSED, the one stream batched.
var parsedPrefix = strings.TrimSuffix(wire.ParsedAll, ">")

// readyBehind returns the members offered right behind the head whose
// turn t is, in stream order: at most max, up to the first that is not
// ready (lanes.Turn.ReadyBehind).
func readyBehind(t *lanes.Turn, max int) []*groupMember {
	var out []*groupMember
	for _, r := range t.ReadyBehind(max) {
		out = append(out, r.(*groupMember))
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
	if d.turn == nil || d.meta.NumDelivered != 1 || d.solo || !h.checkGroups() {
		return false
	}
	members := h.groupOf(m, readyBehind(d.turn, ejs.MaxAtomicBatch))
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
	err := gs.publish(bctx, h.nc, outs, ids)
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
// that takes no batches of the kind picked is said once, and no group is
// tried again.
func (h *Hub) groupFailed(d *delivery, n int, err error) {
	reason, what := "failed", "nothing of it stored"
	switch {
	case ejs.AtomicUnavailable(err) || ejs.FastUnavailable(err):
		reason = "unavailable"
		if h.groups.off.CompareAndSwap(false, true) {
			h.log.Warn().Err(err).Str("stream", h.cfg.Streams.Parsed).
				Msg("the server or the stream takes no batches: a partner's pipelined messages settle one at a time (atomic batches need nats-server 2.12 and allow_atomic, fast batches 2.14 and allow_batched)")
		}
	case ejs.AtomicDuplicate(err):
		reason = "duplicate"
	case errors.Is(err, ejs.ErrFastPrefix):
		reason, what = "prefix", "a first part of it stored"
	}
	h.met.GroupFallbacks.WithLabelValues(reason).Inc()
	h.log.Debug().Err(err).Str("partner", d.partner).Uint64("seq", d.origSeq).Int("messages", n).Str("reason", reason).
		Msg("group settle failed, " + what + "; settled from the head one at a time")
}

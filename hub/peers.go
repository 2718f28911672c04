package hub

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/counter"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// Outcomes the attempt store refused, shared by the hubs of a cluster.
//
// A hub keeps an outcome the store refused in memory and stores it at the
// message's next delivery (keepUnstored, withUnstored). On a cluster that
// delivery may be another hub's: the partition moved. That hub would see
// an attempt with no outcome (and, after a run alone, a solo mark with no
// outcome: a death) and charge the store's fault to the message. So the
// hub that kept the outcome announces it to the others on core NATS
// (wire.UnstoredSubject: core works while the store has no quorum or a
// full disk), signed with the hub keyring (x-hub-mac, which the hubs of a
// cluster share); every hub holds what its peers announced, and whichever
// gets the message stores it and announces that it did, so the others
// drop theirs. The outcome is stamped when kept (Failure.At), so one
// stored twice (announcements that crossed) is kept once (Record.Holds).

// heldOutcome is an explained outcome the attempt store did not take,
// held until the message comes back.
type heldOutcome struct {
	f counter.Failure // stamped when first kept (its identity)
	// peer: announced by another hub. This hub's in-flight table does
	// not count it (the table counts this process's solo outcomes).
	peer bool
	kept time.Time // when this hub began to hold it (the age limit)
}

// maxUnstored bounds the outcomes held for messages that have not come
// back yet, maxHeldPerMessage those of one message (the most recent are
// kept: one more than the record keeps explains nothing more).
const (
	maxUnstored       = 4096
	maxHeldPerMessage = 16
)

// Announcements: what a hub sends its peers.
const (
	announceKept    = "kept"    // the store refused this outcome; hold it
	announceApplied = "applied" // this outcome is stored now; drop it
	// maxAnnouncement bounds a received announcement, maxAnnouncedMessage
	// the failure text it carries (the record keeps the hub's own text
	// bounded too; this is the wire's bound).
	maxAnnouncement     = 4096
	maxAnnouncedMessage = 1024
)

// announcement is the body of a message on wire.UnstoredSubject.
type announcement struct {
	Op       string          `json:"op"`
	From     string          `json:"from"` // the sending hub's instance id: it ignores its own
	Stream   string          `json:"stream"`
	Consumer string          `json:"consumer"`
	Seq      uint64          `json:"seq"`
	Failure  counter.Failure `json:"failure"` // Solo says the attempt ran alone
}

func (a announcement) key() counter.Key {
	return counter.Key{Stream: a.Stream, Consumer: a.Consumer, Seq: a.Seq}
}

// sharesOutcomes reports whether this hub tells its peers of refused
// outcomes: it shares its partitions (a cluster, pinned or replicated)
// and has the keyring its peers verify with. One hub alone has no one to
// tell.
func (h *Hub) sharesOutcomes() bool {
	shared := h.cfg.Cluster.Replicas > 1 || h.cfg.Cluster.IsPinned() || h.owners != nil
	return shared && h.keys != nil && !h.hooks.noPeerOutcomes
}

func newInstanceID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// heldMaxAge is how long a held outcome is kept: the attempt record's TTL.
// After it the store has forgotten the attempts the outcome explains.
func (h *Hub) heldMaxAge() time.Duration { return h.cfg.Attempts.CounterTTL }

// holdLocked adds o to k's held outcomes (h.unstoredMu held): an identical
// one held already is not added twice. It returns false when it was.
func (h *Hub) holdLocked(k counter.Key, o heldOutcome) bool {
	list := h.unstored[k]
	for _, x := range list {
		if sameOutcome(x.f, o.f) {
			return false
		}
	}
	if h.unstoredN >= maxUnstored { // bounded: one that never comes back is forgotten
		h.evictLocked(k)
	}
	if len(list) >= maxHeldPerMessage {
		list = append(list[:0:0], list[1:]...)
		h.unstoredN--
	}
	h.unstored[k] = append(list, o)
	h.unstoredN++
	return true
}

// evictLocked makes room: the outcomes past their age first, else one
// other message's.
func (h *Hub) evictLocked(keep counter.Key) {
	cutoff := time.Now().Add(-h.heldMaxAge())
	for k, list := range h.unstored {
		fresh := list[:0]
		for _, o := range list {
			if o.kept.After(cutoff) {
				fresh = append(fresh, o)
			}
		}
		h.setHeldLocked(k, fresh, len(list))
	}
	if h.unstoredN < maxUnstored {
		return
	}
	for k, list := range h.unstored {
		if k != keep {
			h.setHeldLocked(k, nil, len(list))
			return
		}
	}
}

func (h *Hub) setHeldLocked(k counter.Key, list []heldOutcome, had int) {
	h.unstoredN += len(list) - had
	if len(list) == 0 {
		delete(h.unstored, k)
		return
	}
	h.unstored[k] = list
}

// takeHeldLocked removes and returns k's held outcomes still within the
// age limit.
func (h *Hub) takeHeldLocked(k counter.Key) []heldOutcome {
	list := h.unstored[k]
	h.setHeldLocked(k, nil, len(list))
	cutoff := time.Now().Add(-h.heldMaxAge())
	out := list[:0]
	for _, o := range list {
		if o.kept.After(cutoff) {
			out = append(out, o)
		}
	}
	return out
}

// dropHeld forgets k's held outcome f, stored by a peer. When it was this
// process's own solo outcome, the in-flight table stops counting it.
func (h *Hub) dropHeld(k counter.Key, f counter.Failure) {
	h.unstoredMu.Lock()
	defer h.unstoredMu.Unlock()
	list := h.unstored[k]
	for i, o := range list {
		if !sameOutcome(o.f, f) {
			continue
		}
		h.setHeldLocked(k, append(list[:i:i], list[i+1:]...), len(list))
		if o.f.Solo && !o.peer {
			if s, c := h.inflight.FindUnstored(k.Seq); s >= 0 {
				h.inflight.SetUnstored(s, k.Seq, c-1)
			}
		}
		return
	}
}

// sameOutcome: one attempt's outcome, stamped when it was kept.
func sameOutcome(a, b counter.Failure) bool {
	return counter.Record{Failures: []counter.Failure{a}}.Holds(b)
}

// announce tells the peers, on core NATS, that k's outcome f was kept
// (the store refused it) or applied (stored). Best effort: a peer that
// misses it charges at most the one attempt, as before announcements.
func (h *Hub) announce(op string, k counter.Key, f counter.Failure) {
	if !h.sharesOutcomes() {
		return
	}
	f.Message = escape.Cut(f.Message, maxAnnouncedMessage)
	body, err := json.Marshal(announcement{Op: op, From: h.instance, Stream: k.Stream, Consumer: k.Consumer, Seq: k.Seq, Failure: f})
	if err != nil {
		return
	}
	msg := &nats.Msg{Subject: wire.UnstoredSubject, Header: nats.Header{}, Data: body}
	audit.SignAnnouncement(h.keys, msg.Header, msg.Subject, body)
	if err := h.nc.PublishMsg(msg); err != nil {
		h.log.Warn().Err(err).Str("key", k.String()).Str("op", op).Msg("could not tell the other hubs of an outcome the attempt store refused")
		return
	}
	h.met.PeerOutcomes.WithLabelValues("sent").Inc()
}

// subscribePeers holds what the other hubs announce, from now until the
// returned stop.
func (h *Hub) subscribePeers() (stop func(), err error) {
	if !h.sharesOutcomes() {
		return func() {}, nil
	}
	sub, err := h.nc.Subscribe(wire.UnstoredSubject, h.onAnnouncement)
	if err != nil {
		return nil, fmt.Errorf("subscribe to %s: %w", wire.UnstoredSubject, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

// onAnnouncement takes a peer's announcement: only one a hub of the
// keyring signed (a forged "applied" would make a hub forget an outcome,
// a forged "kept" explain a killer's death).
func (h *Hub) onAnnouncement(m *nats.Msg) {
	a, err := h.readAnnouncement(m)
	if err != nil {
		h.met.PeerOutcomes.WithLabelValues("refused").Inc()
		// one line a minute: whoever floods the subject must not flood the log
		if n, due := h.peerLogSampler.Sample("refused", time.Now()); due {
			h.log.Warn().Err(err).Int("dropped_unlogged_since", n).
				Msg("announcement of an unstored outcome dropped: not signed with this hub's audit key (do the hubs of the cluster share EDIHUB_AUDIT_KEY?), or malformed")
		}
		return
	}
	if a.From == h.instance {
		return
	}
	h.met.PeerOutcomes.WithLabelValues("received").Inc()
	k := a.key()
	switch a.Op {
	case announceKept:
		h.unstoredMu.Lock()
		h.holdLocked(k, heldOutcome{f: a.Failure, peer: true, kept: time.Now()})
		h.unstoredMu.Unlock()
	case announceApplied:
		h.dropHeld(k, a.Failure)
	}
}

func (h *Hub) readAnnouncement(m *nats.Msg) (announcement, error) {
	var a announcement
	if len(m.Data) > maxAnnouncement {
		return a, fmt.Errorf("%d bytes, more than %d", len(m.Data), maxAnnouncement)
	}
	if err := audit.VerifyAnnouncement(h.keys, m.Header, m.Subject, m.Data); err != nil {
		return a, err
	}
	if err := json.Unmarshal(m.Data, &a); err != nil {
		return a, fmt.Errorf("unreadable: %w", err)
	}
	switch {
	case a.Op != announceKept && a.Op != announceApplied:
		return a, fmt.Errorf("op %q", a.Op)
	case a.Stream == "" || a.Consumer == "" || a.Seq == 0:
		return a, errors.New("names no message")
	case a.Failure.At.IsZero():
		return a, errors.New("the outcome has no time")
	case time.Since(a.Failure.At) > h.heldMaxAge():
		return a, errors.New("the outcome is older than the attempt records")
	}
	return a, nil
}

package parse

import (
	"bytes"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/ledger"
)

// LedgerKey names an interchange the way its sender does, within the
// partner that sent it (from the stored subject, never from a header): a
// partner's retransmission of the same interchange has the same key, and
// one partner cannot pre-empt another's control reference.
type LedgerKey = ledger.Key

// Ledger remembers the interchanges processed successfully, so that a
// replay or a partner's retransmission is not processed twice.
// *ledger.KVStore implements it on a JetStream KV bucket.
type Ledger interface {
	// Duplicate reports whether k was processed by a message other than
	// origin (the stream ID of the message at hand, INGEST:42). The same
	// message delivered again after a partial failure is not its own
	// duplicate: its outputs are published again (and deduplicated by the
	// server) instead of being lost.
	Duplicate(k LedgerKey, origin string) (bool, error)
	// RecordMsgBy is the message that records k as processed by origin.
	// The worker publishes it with the interchange's outputs, pipelined,
	// and acks the interchange only when every one is stored: no fsync and
	// no round trip of its own per message.
	RecordMsgBy(k LedgerKey, origin string) *nats.Msg
	// Granted reports whether an operator forced the replay of ref (the
	// x-replayed-from of the message) with this payload: only then does
	// x-replay-force override the ledger, since any producer can set a
	// header.
	Granted(ref, payloadSHA256 string) (bool, error)
}

type ledgerLookup struct {
	key  LedgerKey
	done chan struct{}
	dup  bool
	err  error
}

func (r *renderer) lookAhead(ich *edifact.Interchange) {
	if r.led == nil || ich == r.lastIch {
		return
	}
	r.lastIch = ich
	r.lookup(LedgerKey{Partner: r.m.Partner, Sender: ich.Sender.ID, Recipient: ich.Recipient.ID, ControlRef: ich.ControlRef})
}

// lookup starts asking the ledger about k, unless it was asked already.
func (r *renderer) lookup(k LedgerKey) {
	if slices.ContainsFunc(r.lookups, func(l *ledgerLookup) bool { return l.key == k }) {
		return
	}
	l := &ledgerLookup{key: k, done: make(chan struct{})}
	r.lookups = append(r.lookups, l)
	go func() {
		defer close(l.done)
		l.dup, l.err = r.led.Duplicate(l.key, r.origin)
	}()
}

// peekLedgerFrom is the size from which the stage reads the first
// interchange header before the walk, so that the ledger lookup runs
// during the whole walk: below it, a walk takes less than the lookup's
// round trip, and the peek's reader would cost more than it saves.
const peekLedgerFrom = 16 << 10

// peekLedgerKey reads the ledger key of the first EDIFACT interchange from
// its UNB, as the hub reads a dead letter's control reference (two
// segments of bounded size at most).
// It is only a head start: the walk's own keys decide, and a lookup for a
// key the walk does not confirm is not used.
func peekLedgerKey(partner string, data []byte) (LedgerKey, bool) {
	r := edifact.NewReader(bytes.NewReader(data))
	r.MaxSegmentLen = 4096
	r.MaxElementLen = 512
	for i := 0; i < 2; i++ {
		seg, err := r.Read()
		if err != nil {
			return LedgerKey{}, false
		}
		if seg.Tag == "UNB" {
			return LedgerKey{Partner: partner, Sender: seg.Value(2, 1), Recipient: seg.Value(3, 1), ControlRef: seg.Value(5, 1)}, true
		}
	}
	return LedgerKey{}, false
}

// duplicates reports whether every key was processed by another message
// (an interchange is a duplicate when all its envelopes are), from the
// lookups started during the walk;
// a key without one (an interchange without messages) is asked now.
func (r *renderer) duplicates(keys []LedgerKey) (bool, error) {
	for _, k := range keys {
		var dup bool
		var err error
		if i := slices.IndexFunc(r.lookups, func(l *ledgerLookup) bool { return l.key == k }); i >= 0 {
			<-r.lookups[i].done
			dup, err = r.lookups[i].dup, r.lookups[i].err
		} else {
			dup, err = r.led.Duplicate(k, r.origin)
		}
		if err != nil || !dup {
			return false, err
		}
	}
	return len(keys) > 0, nil
}

// LedgerKeys are the ledger keys of an interchange document sent by partner.
func LedgerKeys(partner string, doc *edifact.Document) []LedgerKey {
	keys := make([]LedgerKey, 0, len(doc.Interchanges))
	for _, ich := range doc.Interchanges {
		keys = append(keys, LedgerKey{Partner: partner, Sender: ich.Sender.ID, Recipient: ich.Recipient.ID, ControlRef: ich.ControlRef})
	}
	return keys
}

package parse

import (
	"context"
	"fmt"
	"slices"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/wire"
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
	// Commit starts recording keys as processed by origin and returns at
	// once; the worker awaits the returned wait with the interchange's
	// outputs and acks the interchange only when both are stored. The
	// store groups the records of interchanges committed together into
	// one stored message: no fsync and no message of its own per
	// interchange.
	Commit(keys []LedgerKey, origin string) ledger.Wait
	// Granted reports whether an operator forced the replay of ref (the
	// x-replayed-from of the message) with this payload: only then does
	// x-replay-force override the ledger, since any producer can set a
	// header.
	Granted(ref, payloadSHA256 string) (bool, error)
}

// checkLedger says whether the interchange was processed before: a
// *hub.DuplicateError when every one of its envelopes was, by another
// message (the ledger answers from memory). x-replay-force overrides the
// ledger only with the grant of an operator's forced replay: any producer
// can set a header.
func checkLedger(led Ledger, in *Input, keys []LedgerKey) error {
	if len(keys) == 0 {
		return nil
	}
	if in.Header.Get(wire.HdrReplayForce) == "true" {
		forced, err := led.Granted(in.Header.Get(wire.HdrReplayedFrom), audit.PayloadHash(in.Data))
		if err != nil {
			return &hub.UnavailableError{Err: fmt.Errorf("interchange ledger: %w", err)}
		}
		if forced {
			return nil
		}
	}
	origin := in.origin()
	for _, k := range keys {
		dup, err := led.Duplicate(k, origin)
		if err != nil {
			return &hub.UnavailableError{Err: fmt.Errorf("interchange ledger: %w", err)}
		}
		if !dup {
			return nil
		}
	}
	names := make([]string, len(keys))
	var origins []string
	by, _ := led.(processedBy)
	for i, k := range keys {
		names[i] = k.String()
		if by == nil {
			continue
		}
		if o, err := by.ProcessedBy(k); err == nil && o != "" && !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
	}
	return &hub.DuplicateError{Keys: names, Origins: origins}
}

// processedBy is a ledger that says which message recorded an
// interchange (*ledger.KVStore): a duplicate then names the earlier one.
type processedBy interface {
	ProcessedBy(k LedgerKey) (string, error)
}

// commitOnSuccess has the worker record keys when it publishes the
// outputs (after every stage succeeded), awaited with them before the
// interchange is acked, and ask the ledger again at the message's turn
// when it ran while an earlier message of its partner was not settled
// (hub.partner_pipeline): that one's records were not in the ledger yet,
// and it may have been the same interchange. The keys are named for a
// group settle, which never groups two messages of the same interchange.
func commitOnSuccess(led Ledger, m *hub.Message, in *Input, keys []LedgerKey) {
	if led == nil || len(keys) == 0 {
		return
	}
	origin := in.origin()
	m.CommitOnSuccess(func() func(context.Context) error { return led.Commit(keys, origin) })
	if m.SettlesInGroups() { // no closure per message without a pipeline
		m.NameRecords(func() []string {
			names := make([]string, len(keys))
			for i, k := range keys {
				names[i] = k.String()
			}
			return names
		})
	}
	if m.RunsAhead() {
		m.RecheckAtSettle(func() error { return checkLedger(led, in, keys) })
	}
}

// LedgerKeys are the ledger keys of an interchange document sent by partner.
func LedgerKeys(partner string, doc *edifact.Document) []LedgerKey {
	return appendLedgerKeys(make([]LedgerKey, 0, len(doc.Interchanges)), partner, doc)
}

// appendLedgerKeys appends doc's ledger keys to keys.
func appendLedgerKeys(keys []LedgerKey, partner string, doc *edifact.Document) []LedgerKey {
	for _, ich := range doc.Interchanges {
		keys = append(keys, LedgerKey{Partner: partner, Sender: ich.Sender.ID, Recipient: ich.Recipient.ID, ControlRef: ich.ControlRef})
	}
	return keys
}

package hub

import (
	"errors"
	"fmt"

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

// DuplicateError says an interchange was processed before. The worker
// acks it without outputs, counts and audits it.
type DuplicateError struct{ Keys []LedgerKey }

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("interchange already processed: %v", e.Keys)
}

func isDuplicate(err error) (*DuplicateError, bool) {
	var d *DuplicateError
	ok := errors.As(err, &d)
	return d, ok
}

// UnavailableError says a service the stage needs (the interchange ledger)
// did not answer: not the message's fault. The worker treats it as a
// failed publish of the outputs: the message waits and is delivered again,
// an explained attempt that counts toward no retry limit and no poison
// verdict, so that a NATS leader election cannot dead-letter or quarantine
// healthy interchanges.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

func isUnavailable(err error) (*UnavailableError, bool) {
	var u *UnavailableError
	ok := errors.As(err, &u)
	return u, ok
}

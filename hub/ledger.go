package hub

import (
	"errors"
	"fmt"
)

// LedgerKey names an interchange the way its sender does: a partner's
// retransmission of the same interchange has the same key.
type LedgerKey struct {
	Sender     string
	Recipient  string
	ControlRef string
}

func (k LedgerKey) String() string {
	return fmt.Sprintf("%s→%s #%s", k.Sender, k.Recipient, k.ControlRef)
}

// Ledger remembers the interchanges processed successfully, so that a
// replay or a partner's retransmission is not processed twice. The ledger
// package implements it on bbolt.
type Ledger interface {
	Seen(k LedgerKey) (bool, error)
	Record(k LedgerKey) error
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

// AfterAck queues f to run once the message's outputs are stored and the
// message is acked (the parse stage records the ledger there, so that an
// interchange that failed is never marked as processed).
func (m *Message) AfterAck(f func()) { m.afterAck = append(m.afterAck, f) }

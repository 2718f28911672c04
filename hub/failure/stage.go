package failure

import (
	"errors"
	"fmt"

	ejs "github.com/edihub/edihub/jetstream"
)

// Headerer is implemented by errors that add headers to their dead
// letter: only those wire.RefusalHeader allows (reason, rule, key id),
// values escaped; any other name is ignored.
type Headerer interface {
	FailureHeaders() map[string]string
}

// DuplicateError says an interchange was processed before. The worker
// acks it without outputs, counts and audits it. Keys name the
// interchanges as the stage that keeps the ledger names them (the parse
// stage: "ACME: SENDER -> RECIPIENT #REF"); the hub only shows them.
//
// Origins are the stream IDs (INGEST:42) of the messages that processed
// them before, where the ledger knows.
type DuplicateError struct{ Keys, Origins []string }

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("interchange already processed: %v", e.Keys)
}

// AsDuplicate finds a *DuplicateError in err's chain.
func AsDuplicate(err error) (*DuplicateError, bool) {
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

// AsUnavailable finds an *UnavailableError in err's chain, or makes one
// of a store's refusal.
func AsUnavailable(err error) (*UnavailableError, bool) {
	var u *UnavailableError
	if errors.As(err, &u) {
		return u, true
	}
	// A store that refused a stage's write (a full disk, a store limit)
	// is the environment's fault, never the message's (issue 25).
	if ejs.StorageFault(err) {
		return &UnavailableError{Err: err}, true
	}
	return nil, false
}

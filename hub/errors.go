package hub

import (
	"errors"
	"fmt"

	"github.com/edihub/edihub/hub/failure"
	ejs "github.com/edihub/edihub/jetstream"
)

// The failure vocabulary of stages lives in package hub/failure; these
// are its names in the hub's API.
type (
	Class   = failure.Class
	Failure = failure.Failure
	Causer  = failure.Causer
)

const (
	Transient    = failure.Transient
	Permanent    = failure.Permanent
	Unclassified = failure.Unclassified
)

var (
	PermanentError = failure.PermanentError
	TransientError = failure.TransientError
	Classify       = failure.Classify
	errorType      = failure.TypeName
)

// FailureHeaderer is implemented by errors that add headers to their dead
// letter: only those wire.RefusalHeader allows (reason, rule, key id),
// values escaped; any other name is ignored.
type FailureHeaderer interface {
	FailureHeaders() map[string]string
}

// DuplicateError says an interchange was processed before. The worker
// acks it without outputs, counts and audits it. Keys name the
// interchanges as the stage that keeps the ledger names them (the parse
// stage: "ACME: SENDER -> RECIPIENT #REF"); the hub only shows them.
type DuplicateError struct{ Keys []string }

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

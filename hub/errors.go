package hub

import (
	"errors"
	"fmt"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Class says what kind of failure an error is.
type Class string

const (
	// Transient failures may heal: they are retried.
	Transient Class = "transient"
	// Permanent failures cannot heal by retrying: they go to the DLQ of
	// their cause at once.
	Permanent Class = "permanent"
	// Unclassified errors are retried in place; when they repeat one
	// fingerprint up to the threshold the message is poison.
	Unclassified Class = "unclassified"
)

// Failure is the typed error a handler returns to say what went wrong.
type Failure struct {
	Class Class
	Cause string // one of wire.Causes
	Err   error
}

func (f *Failure) Error() string {
	if f.Err == nil {
		return string(f.Class) + " " + f.Cause
	}
	return f.Err.Error()
}

func (f *Failure) Unwrap() error { return f.Err }

// PermanentError marks err as permanent with a DLQ cause.
func PermanentError(cause string, err error) error {
	if !wire.ValidCause(cause) {
		cause = wire.CauseUnknown
	}
	return &Failure{Class: Permanent, Cause: cause, Err: err}
}

// TransientError marks err as transient. If retries are exhausted the
// message goes to the DLQ of cause (unknown when empty).
func TransientError(cause string, err error) error {
	if cause == "" || !wire.ValidCause(cause) {
		cause = wire.CauseUnknown
	}
	return &Failure{Class: Transient, Cause: cause, Err: err}
}

// Causer is implemented by errors of other packages that know their DLQ
// cause (the edifact package's errors say "schema"); they are permanent.
type Causer interface{ Cause() string }

// Classify turns any error into a Failure. classMap maps an error-class
// name (the %T of the innermost typed error, or a Failure's cause) to a
// cause from the config.
func Classify(err error, classMap map[string]string) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	var c Causer
	if errors.As(err, &c) && wire.ValidCause(c.Cause()) {
		return &Failure{Class: Permanent, Cause: c.Cause(), Err: err}
	}
	if cause, ok := classMap[errorType(err)]; ok {
		if cause == string(Transient) {
			return &Failure{Class: Transient, Cause: wire.CauseUnknown, Err: err}
		}
		return &Failure{Class: Permanent, Cause: cause, Err: err}
	}
	return &Failure{Class: Unclassified, Cause: wire.CauseUnknown, Err: err}
}

// errorType names the innermost error of a wrap chain, like "*fs.PathError".
func errorType(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return fmt.Sprintf("%T", err)
		}
		err = next
	}
}

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

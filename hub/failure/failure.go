package failure

import (
	"errors"
	"fmt"

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
	if cause, ok := classMap[TypeName(err)]; ok {
		if cause == string(Transient) {
			return &Failure{Class: Transient, Cause: wire.CauseUnknown, Err: err}
		}
		return &Failure{Class: Permanent, Cause: cause, Err: err}
	}
	return &Failure{Class: Unclassified, Cause: wire.CauseUnknown, Err: err}
}

// TypeName names the innermost error of a wrap chain, like "*fs.PathError".
func TypeName(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return fmt.Sprintf("%T", err)
		}
		err = next
	}
}

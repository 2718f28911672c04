package hub

import "github.com/edihub/edihub/hub/failure"

// The failure vocabulary of stages lives in package hub/failure; these
// are its names in the hub's API.
type (
	Class            = failure.Class
	Failure          = failure.Failure
	Causer           = failure.Causer
	FailureHeaderer  = failure.Headerer
	DuplicateError   = failure.DuplicateError
	UnavailableError = failure.UnavailableError
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
	isDuplicate    = failure.AsDuplicate
	isUnavailable  = failure.AsUnavailable
)

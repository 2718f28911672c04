// Package failure is the vocabulary a stage uses to say what went wrong:
// a Failure with its Class (transient, permanent, unclassified) and DLQ
// cause, and Classify, the pure rule that turns any error into one. The
// hub decides where a message goes from it; package hub names these
// types and functions in its API (hub.Failure, hub.PermanentError, ...).
//
// It imports wire only (test/arch_test.go checks it).
package failure

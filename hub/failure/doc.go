// Package failure is the vocabulary a stage uses to say what went wrong:
// a Failure with its Class (transient, permanent, unclassified) and DLQ
// cause, and Classify, the pure rule that turns any error into one. The
// hub decides where a message goes from it; package hub names these
// types and functions in its API (hub.Failure, hub.PermanentError, ...).
//
// DuplicateError and UnavailableError are what a stage returns for an
// interchange seen before and for a service (or store) that did not
// answer; Headerer, the hub-owned headers a refusal adds to its dead
// letter. It imports wire and jetstream (StorageFault) only;
// test/arch_test.go checks it.
package failure

// Package wire is edihub's wire contract: the names every other package
// uses on NATS instead of string literals. It owns
//
//   - the x-* header names the hub writes and reserves (headers.go),
//   - the subjects it publishes to and how to read them back (subjects.go),
//   - the stream names and their defaults (streams.go),
//   - the identifiers operators type and the Nats-Msg-Id dedupe ids (ids.go),
//   - the dead-letter causes, which are subject tokens (causes.go).
//
// It imports only the standard library: every package of the module may
// import it, and it imports none of them.
package wire

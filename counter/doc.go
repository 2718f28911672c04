// Package counter is the attempt store: it remembers the explained outcomes
// (failures) of a message's attempts, keyed by (stream, consumer, stream
// sequence), so that the hub can tell them apart from attempts that ended
// with no outcome because the process died or hung. It also owns the
// in-flight table (InFlight) that names those attempts after a crash.
//
// Only failures are written: a healthy message costs nothing in the bbolt
// store. Records survive restarts, are deleted when the message succeeds or
// is quarantined, and are purged after a TTL.
//
// Two stores behave the same (conformance_test.go checks both):
//
//   - Store, a bbolt file: the single-binary default for edge sites. It
//     mirrors its keys in memory, so a healthy message needs no read.
//   - KVStore, a JetStream KV bucket, replicated on a cluster so that hubs
//     sharing consumers share the records. Updates compare and set the
//     key's revision and retry on conflict, so none is lost; Get and Delete
//     read the bucket each time (another hub may have written); Len lists
//     the keys; the bucket's MaxAge drops a record TTL after its last write
//     even if Purge never runs.
//
// The hub depends on a small interface (hub.AttemptStore) and the serve
// command picks the store from its configuration. The package imports
// nothing of this module (nats.go's jetstream only; its tests use
// jetstream/jetstreamtest).
package counter

// Package counter is the attempt store: it remembers the explained outcomes
// (failures) of a message's attempts, keyed by (stream, consumer, stream
// sequence), so that the hub can tell them apart from attempts that ended
// with no outcome because the process died or hung.
//
// Only failures are written: a healthy message costs nothing here. Records
// survive restarts, are deleted when the message succeeds or is quarantined,
// and are purged after a TTL. Store is a bbolt file for edge sites; the hub
// depends on a small interface, so a replicated store can replace it.
package counter

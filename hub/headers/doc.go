// Package headers is the hub's hygiene for a producer's headers: which of
// them a copy (poison, dead letter, retry) carries and under which names,
// which a parsed output carries, and the fallback of the hub's own
// headers only. Everyone outside the hub is an adversary, so the rules
// are pure functions over nats.Header, in one place.
//
// It may import wire and escape; hub imports it. test/arch_test.go
// checks it.
package headers

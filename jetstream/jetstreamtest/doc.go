// Package jetstreamtest is the one test kit of the module: a real embedded
// nats-server with JetStream on a free loopback port and a temporary store,
// a connection that closes with the test, and CheckFor, the polling helper
// that replaces fixed sleeps (after nats-server's own checkFor).
//
// Only tests import it (test/arch_test.go checks). It imports jetstream and
// the NATS libraries, nothing else of this module.
package jetstreamtest

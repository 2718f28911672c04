// Package client is what a partner's or an operator's program calls to
// talk to a running hub over NATS: send an interchange under its dedupe
// id (NewMessage, Signed), publish it while following the connection
// (Link, Publish: "no answer" told apart from "no", so a re-send under the
// same id is safe), wait for the hub's verdict on each file (Watch:
// parsed, duplicate, dead-lettered, quarantined, retrying), and follow
// messages through the streams, never by events they can miss: Tracker,
// the one reader of outcomes, polled by `edihub drill` and under
// StreamVerdicts/WaitVerdicts for `edihub send` and `dlq replay --outcome`;
// and read a stored message by STREAM:SEQ or
// subject (Fetch, for `edihub fetch`). Flags, output and exit codes stay in
// cmd/edihub.
//
// It may import the leaves wire, escape and jetstream, never the hub:
// a client knows the wire, not the pipeline. test/arch_test.go checks it.
package client

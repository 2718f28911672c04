// Package claimcheck stores aside a payload too large for the NATS
// server (a connection's max payload, a stream's max message size): the
// payload goes into a JetStream Object Store bucket, and the message
// carries in its place the reference, size and SHA-256 in hub-owned
// headers (wire.HdrPayloadRef, wire.HdrPayloadSize, wire.HdrPayloadSHA256)
// and a small JSON stub body (wire.ClaimStub). Readers get the payload
// back with hubclient.Payload.
//
// It owns the bucket (created, then bound, through
// jetstream.EnsureObjectStore, replicated like the streams, objects kept
// as long as the stream the messages are in keeps them) and the one
// function that stores a payload aside. It imports wire and jetstream
// only; the hub reaches it through hub.ClaimChecker, given by app, and
// reads its config section (hub.claim_check) as Settings.
package claimcheck

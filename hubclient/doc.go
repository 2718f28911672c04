// Package hubclient is for applications that consume edihub's outputs:
// Payload returns a message's payload, inline or, when the hub stored it
// aside because it would not fit the NATS server (x-payload-ref), fetched
// from the object store and checked against its size and SHA-256.
//
// It imports wire only (and nats.go), so a consumer does not pull in the
// hub.
package hubclient

package main

import (
	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/partner"
)

// signFunc adds a producer's signature headers for a payload.
type signFunc func(h nats.Header, data []byte)

// loadSignKey reads `send --sign-key FILE`: the signature covers the
// payload, the partner sent as and the time of sending. No file: a
// signFunc that does nothing.
func loadSignKey(path, partnerID string) (signFunc, error) {
	if path == "" {
		return func(nats.Header, []byte) {}, nil
	}
	k, err := partner.ReadSigningKey(path)
	if err != nil {
		return nil, usageErr("--sign-key %s: %v (make one with 'edihub partner keygen')", escape.Line(path), err)
	}
	return func(h nats.Header, data []byte) { k.Sign(h, partnerID, data) }, nil
}

package audit

import (
	"errors"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/wire"
)

// copyMACDomain separates copy MACs from audit-event MACs of the same key.
const copyMACDomain = "edihub-hub-copy-v1"

// copyMACInput is what a copy's MAC covers: where it came from, what the
// hub decided about drills, and the payload. Newlines separate the fields;
// header values cannot contain one.
func copyMACInput(h nats.Header, payload []byte) []byte {
	return []byte(strings.Join([]string{
		h.Get(wire.HdrOriginalStream), h.Get(wire.HdrOriginalSeq),
		h.Get(wire.HdrDrillMode), h.Get(wire.HdrDrill), PayloadHash(payload),
	}, "\n"))
}

// delFold removes every letter-case variant of a header name.
func delFold(h nats.Header, name string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
}

// SignCopy sets x-hub-mac on a copy the hub made (dead letter, retry,
// quarantine), so that the sandbox can tell the hub's x-drill-mode from a
// producer's; with no keyring it only
// removes one a producer may have sent.
func SignCopy(keys *Keyring, h nats.Header, payload []byte) {
	setMAC(keys, h, wire.HdrHubMAC, copyMACDomain, func() []byte { return copyMACInput(h, payload) })
}

// setMAC replaces h's header name with the MAC under domain of what input
// gives (read after the old value is gone); with no keyring it only
// removes the old one.
func setMAC(keys *Keyring, h nats.Header, name, domain string, input func() []byte) {
	delFold(h, name)
	if keys == nil {
		return
	}
	kid, tag := keys.Sign(domain, input())
	h.Set(name, kid+":"+tag)
}

// VerifyCopy checks a copy's x-hub-mac: nil only when the hub made it
// with a key of keys, with these provenance and drill headers and this
// payload.
func VerifyCopy(keys *Keyring, h nats.Header, payload []byte) error {
	if keys == nil {
		return errors.New("no audit key to check x-hub-mac with")
	}
	v := h.Get(wire.HdrHubMAC)
	if v == "" {
		return errors.New("the copy carries no x-hub-mac")
	}
	kid, tag, ok := strings.Cut(v, ":")
	if !ok {
		return errors.New("x-hub-mac is not kid:mac")
	}
	if err := keys.Check(copyMACDomain, kid, tag, copyMACInput(h, payload)); err != nil {
		return errors.New("x-hub-mac: " + err.Error())
	}
	return nil
}

// replayMACDomain separates the MAC of an operator's replay from the
// other MACs of the same key.
const replayMACDomain = "edihub-operator-replay-v1"

func replayMACInput(h nats.Header, payload []byte) []byte {
	return []byte(strings.Join([]string{
		h.Get(wire.HdrReplayedFrom), h.Get(wire.HdrReplayedBy), h.Get(wire.HdrReplayForce), PayloadHash(payload),
	}, "\n"))
}

// SignReplay sets x-replay-mac on an operator's replay copy: the hub
// then knows its x-replayed-from is the runbook's, not a producer's, and
// links the copy's dead letter back to the message replayed (and audits
// its duplicate every time). With no keyring it only removes one a
// producer may have sent.
func SignReplay(keys *Keyring, h nats.Header, payload []byte) {
	setMAC(keys, h, wire.HdrReplayMAC, replayMACDomain, func() []byte { return replayMACInput(h, payload) })
}

// ReplayedFrom is the x-replayed-from of a message whose x-replay-mac
// verifies with keys ("" for a producer's message, or with no keys).
func ReplayedFrom(keys *Keyring, h nats.Header, payload []byte) string {
	v := h.Get(wire.HdrReplayMAC)
	kid, tag, ok := strings.Cut(v, ":")
	if keys == nil || !ok || h.Get(wire.HdrReplayedFrom) == "" {
		return ""
	}
	if keys.Check(replayMACDomain, kid, tag, replayMACInput(h, payload)) != nil {
		return ""
	}
	return h.Get(wire.HdrReplayedFrom)
}

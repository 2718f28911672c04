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
	return checkMAC(keys, h, wire.HdrHubMAC, copyMACDomain, copyMACInput(h, payload))
}

// checkMAC verifies what setMAC put in h's header name: nil only when a
// key of keys made it under domain over input.
func checkMAC(keys *Keyring, h nats.Header, name, domain string, input []byte) error {
	if keys == nil {
		return errors.New("no audit key to check " + name + " with")
	}
	v := h.Get(name)
	if v == "" {
		return errors.New("no " + name)
	}
	kid, tag, ok := strings.Cut(v, ":")
	if !ok {
		return errors.New(name + " is not kid:mac")
	}
	if err := keys.Check(domain, kid, tag, input); err != nil {
		return errors.New(name + ": " + err.Error())
	}
	return nil
}

// announceMACDomain separates the MAC of a hub's announcement to the
// other hubs of its cluster from the other MACs of the same key.
const announceMACDomain = "edihub-hub-announcement-v1"

func announceMACInput(subject string, payload []byte) []byte {
	return append([]byte(subject+"\n"), payload...)
}

// SignAnnouncement sets x-hub-mac on a message a hub sends the other hubs
// of its cluster on core NATS (wire.UnstoredSubject): they share the key,
// whoever else may publish there does not. With no keyring it only
// removes one.
func SignAnnouncement(keys *Keyring, h nats.Header, subject string, payload []byte) {
	setMAC(keys, h, wire.HdrHubMAC, announceMACDomain, func() []byte { return announceMACInput(subject, payload) })
}

// VerifyAnnouncement checks an announcement's x-hub-mac: nil only when a
// hub with a key of keys sent this payload on this subject.
func VerifyAnnouncement(keys *Keyring, h nats.Header, subject string, payload []byte) error {
	return checkMAC(keys, h, wire.HdrHubMAC, announceMACDomain, announceMACInput(subject, payload))
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

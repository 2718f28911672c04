package audit

import (
	"errors"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/wire"
)

// CopyMAC is the version of a copy's x-hub-mac: what the hub vouches for.
type CopyMAC int

const (
	// CopyMACv1 ("<kid>:<mac>", copies stored by an older hub) covers the
	// original's stream and sequence, x-drill-mode, x-drill and the
	// payload: enough to trust a drill, not a partner or an upload.
	CopyMACv1 CopyMAC = 1
	// CopyMACv2 ("v2:<kid>:<mac>", what SignCopy writes) covers those and
	// the partner, the original's subject and the upload and payload
	// reference headers: a reader may look the upload up under that
	// partner.
	CopyMACv2 CopyMAC = 2
)

// String is the version as reports name it: "v1", "v2".
func (v CopyMAC) String() string {
	switch v {
	case CopyMACv1:
		return "v1"
	case CopyMACv2:
		return "v2"
	}
	return ""
}

// The domains separate copy MACs from audit-event MACs of the same key,
// and one version's from the other's.
const (
	copyMACDomain   = "edihub-hub-copy-v1"
	copyMACDomainV2 = "edihub-hub-copy-v2"
	copyMACPrefixV2 = "v2:"
)

// copyMACInput is what a v1 MAC covers. Newlines separate the fields;
// header values cannot contain one.
func copyMACInput(h nats.Header, payload []byte) []byte {
	return []byte(strings.Join([]string{
		h.Get(wire.HdrOriginalStream), h.Get(wire.HdrOriginalSeq),
		h.Get(wire.HdrDrillMode), h.Get(wire.HdrDrill), PayloadHash(payload),
	}, "\n"))
}

// copyMACHeadersV2 are the headers a v2 MAC covers, in this order, each
// read in exactly this spelling (the one the hub writes; a variant in
// another case is a producer's).
var copyMACHeadersV2 = []string{
	wire.HdrOriginalStream, wire.HdrOriginalSeq, wire.HdrOriginalTopic, wire.HdrPartnerID,
	wire.HdrDrillMode, wire.HdrDrill,
	wire.HdrUploadSHA256, wire.HdrUploadSize, wire.HdrPayloadRef, wire.HdrPayloadSize, wire.HdrPayloadSHA256,
}

// copyMACInputV2 is what a v2 MAC covers: each header as name=value on a
// line of its own, then the payload's SHA-256.
func copyMACInputV2(h nats.Header, payload []byte) []byte {
	b := make([]byte, 0, 512)
	for _, k := range copyMACHeadersV2 {
		b = append(append(append(append(b, k...), '='), h.Get(k)...), '\n')
	}
	return append(b, PayloadHash(payload)...)
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
// quarantine): a v2 MAC over its provenance, partner, drill and upload
// headers and its payload, so that a reader (the sandbox, a replay) can
// tell the hub's copy from one anybody published on the subject. With no
// keyring it only removes one a producer may have sent.
func SignCopy(keys *Keyring, h nats.Header, payload []byte) {
	setMAC(keys, h, wire.HdrHubMAC, copyMACPrefixV2, copyMACDomainV2, func() []byte { return copyMACInputV2(h, payload) })
}

// setMAC replaces h's header name with the MAC under domain of what input
// gives (read after the old value is gone), as <prefix><kid>:<mac>; with
// no keyring it only removes the old one.
func setMAC(keys *Keyring, h nats.Header, name, prefix, domain string, input func() []byte) {
	delFold(h, name)
	if keys == nil {
		return
	}
	kid, tag := keys.Sign(domain, input())
	h.Set(name, prefix+kid+":"+tag)
}

// CheckCopy checks a copy's x-hub-mac and says which version verified:
// nil only when the hub made it with a key of keys, with these headers (as
// far as the version covers them) and this payload. A v1 MAC vouches for
// less (CopyMACv1): a caller that trusts the partner or the upload headers
// needs CopyMACv2.
func CheckCopy(keys *Keyring, h nats.Header, payload []byte) (CopyMAC, error) {
	if keys == nil {
		return 0, errors.New("no audit key to check x-hub-mac with")
	}
	v := h.Get(wire.HdrHubMAC)
	if v == "" {
		return 0, errors.New("the copy carries no x-hub-mac")
	}
	version, domain, input := CopyMACv1, copyMACDomain, copyMACInput
	if rest, ok := strings.CutPrefix(v, copyMACPrefixV2); ok {
		version, domain, input, v = CopyMACv2, copyMACDomainV2, copyMACInputV2, rest
	}
	kid, tag, ok := strings.Cut(v, ":")
	if !ok {
		return 0, errors.New("x-hub-mac is not [v2:]kid:mac")
	}
	if err := keys.Check(domain, kid, tag, input(h, payload)); err != nil {
		return 0, errors.New("x-hub-mac: " + err.Error())
	}
	return version, nil
}

// VerifyCopy checks a copy's x-hub-mac (either version, see CheckCopy).
func VerifyCopy(keys *Keyring, h nats.Header, payload []byte) error {
	_, err := CheckCopy(keys, h, payload)
	return err
}

// checkMAC verifies what setMAC put, with no prefix, in h's header name:
// nil only when a key of keys made it under domain over input.
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
	setMAC(keys, h, wire.HdrHubMAC, "", announceMACDomain, func() []byte { return announceMACInput(subject, payload) })
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
	setMAC(keys, h, wire.HdrReplayMAC, "", replayMACDomain, func() []byte { return replayMACInput(h, payload) })
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

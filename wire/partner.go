package wire

import "strconv"

// Partner agreements: the headers a producer may set to sign an
// interchange, the headers the parse stage sets on a refusal, and the
// outbound subjects acknowledgements go to.
const (
	// HdrSignature is a producer's detached signature over the payload,
	// "ed25519:<standard base64 of 64 bytes>". Only this exact spelling
	// is read; any letter-case variant is moved to x-producer-*.
	HdrSignature = "x-signature"
	// HdrSignatureKey names the partner's key that made HdrSignature
	// (a key id of the partner's profile, never the key).
	HdrSignatureKey = "x-signature-key"
	// HdrSignatureTime is when the producer signed (Unix seconds): part of
	// the signed content with the partner ID, and checked against the
	// profile's window, so a signature is neither replayed after the
	// ledger forgot the interchange nor valid for another partner.
	HdrSignatureTime = "x-signature-time"
	// SignatureScheme prefixes the value of HdrSignature.
	SignatureScheme = "ed25519:"

	// Set by the parse stage on a refusal by a partner profile.
	// HdrRejectReason is a stable code (unknown-partner,
	// sender-not-allowed, ...); HdrRule names a failing business rule;
	// HdrSignatureKeyID is the key id the producer named, as the hub read
	// it (escaped).
	HdrRejectReason   = "x-reject-reason"
	HdrRule           = "x-rule"
	HdrSignatureKeyID = "x-signature-key-id"
	// HdrRuleXPath is where the first failing rule of a UBL document
	// failed: "XPATH line:column" (escaped).
	HdrRuleXPath = "x-rule-xpath"

	// On acknowledgements (edi.outbound.<partner>.<type>).
	// HdrAckOf is the control reference of the interchange acknowledged
	// (UNB 0020, ISA13); HdrAckOrigin its INGEST message (INGEST:42);
	// HdrAckResult accepted or rejected.
	HdrAckOf     = "x-ack-of"
	HdrAckOrigin = "x-ack-origin"
	HdrAckResult = "x-ack-result"

	// DefaultOutboundStream stores acknowledgements to partners.
	DefaultOutboundStream = "OUTBOUND"
	// OutboundAll is the OUTBOUND stream's subject filter.
	OutboundAll    = "edi.outbound.>"
	outboundPrefix = "edi.outbound."
)

// Reject reasons (x-reject-reason).
const (
	ReasonUnknownPartner    = "unknown-partner"
	ReasonSenderNotAllowed  = "sender-not-allowed"
	ReasonRecipientNotOurs  = "recipient-not-ours"
	ReasonTypeNotAgreed     = "type-not-agreed"
	ReasonSyntaxNotAgreed   = "syntax-not-agreed"
	ReasonTestNotAgreed     = "test-not-agreed"
	ReasonSignatureMissing  = "signature-missing"
	ReasonSignatureBad      = "signature-malformed"
	ReasonSignatureKey      = "signature-key-unknown"
	ReasonSignatureMismatch = "signature-mismatch"
	ReasonRuleFailed        = "rule-failed"
	ReasonDirectory         = "directory"
	ReasonUBLProfile        = "ubl-profile-not-agreed" // CustomizationID, ProfileID or sender endpoint of a UBL document
)

// StandardUBL is the x-standard of a UBL document (EDIFACT and X12 are
// the edifact package's).
const StandardUBL = "UBL"

func init() {
	producerSettable[HdrSignature] = true
	producerSettable[HdrSignatureKey] = true
	producerSettable[HdrSignatureTime] = true
	for _, n := range []string{HdrRejectReason, HdrRule, HdrRuleXPath, HdrSignatureKeyID, HdrAckOf, HdrAckOrigin, HdrAckResult} {
		hubOwned[n] = true
	}
}

// RefusalHeader reports whether a stage's refusal may set name on its
// dead letter (hub.FailureHeaderer): only these, never the hub's others
// (x-partner-id, x-original-*, ...).
func RefusalHeader(name string) bool {
	return name == HdrRejectReason || name == HdrRule || name == HdrRuleXPath || name == HdrSignatureKeyID
}

// OutboundSubject is where an acknowledgement of type typ (CONTRL, 999,
// TA1, APERAK, MLR) for partner goes: edi.outbound.<partner>.<type>.
func OutboundSubject(partner, typ string) string {
	return outboundPrefix + partner + "." + SubjectToken(typ)
}

// AckMsgID is the Nats-Msg-Id of acknowledgement i of INGEST message
// origin (STREAM:SEQ): a redelivered interchange acknowledges once.
func AckMsgID(origin string, i int) string {
	return origin + ":ack:" + strconv.Itoa(i)
}

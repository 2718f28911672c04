package wire

import "strings"

// Header names carried by dead letters, retries, poison copies and
// outputs. The payload travels byte for byte; these say why. The hub owns
// every x-* name below: a producer's header of the same name (in any
// letter case) is never taken for the hub's.
const (
	HdrOriginalTopic  = "x-original-topic"
	HdrOriginalStream = "x-original-stream"
	HdrOriginalSeq    = "x-original-seq"
	HdrErrorClass     = "x-error-class"
	HdrErrorMsg       = "x-error-msg"
	HdrErrorCause     = "x-error-cause"
	HdrRetryCount     = "x-retry-count"
	HdrAttempts       = "x-attempts"
	HdrFirstFailedAt  = "x-first-failed-at"
	HdrDetectedAt     = "x-detected-at"
	HdrPoisonCause    = "x-poison-cause"
	HdrCorrelationID  = "x-correlation-id"
	HdrPartnerID      = "x-partner-id"
	HdrMessageID      = "x-message-id"
	HdrStage          = "x-stage"
	HdrPartition      = "x-partition"
	HdrFingerprint    = "x-error-fingerprint"
	HdrRetryTier      = "x-retry-tier"
	// HdrProcessDeaths is how many times the process died while a
	// quarantined message ran alone (poison cause process-died). The first
	// death, while it ran beside other partitions' messages, is not
	// among them: it is not held against any message.
	HdrProcessDeaths = "x-process-deaths"
	// HdrDrill asks a --drill hub to fail on purpose (panic, hang, exit,
	// error).
	HdrDrill = "x-drill"
	// HdrDrillMode "on" marks a copy made by a hub running with --drill: only
	// then does the sandbox reproduce the drill, since a partner could send
	// an x-drill header of its own.
	HdrDrillMode = "x-drill-mode"
	// HdrHubMAC authenticates a copy the hub made: "v2:<kid>:<hex
	// HMAC-SHA256>" with the audit keyring over the original's stream,
	// sequence and subject, the partner, the drill, upload and
	// payload-reference headers and the payload's SHA-256 (audit.SignCopy;
	// an older hub's "<kid>:<mac>" is v1, over less). The sandbox honours
	// x-drill-mode only when it verifies, and reads an announced upload
	// only when v2 does.
	HdrHubMAC = "x-hub-mac"
	// HdrReplayForce "true" makes the parse stage process an interchange the
	// ledger has seen (`edihub dlq replay --force --reason`).
	HdrReplayForce = "x-replay-force"

	// Set by the parse stage on its outputs.
	HdrMessageType = "x-message-type"
	HdrMessageRef  = "x-message-ref"
	HdrStandard    = "x-standard"

	// Set by operator actions on the copies they make.
	HdrReplayedFrom = "x-replayed-from"
	HdrReplayedBy   = "x-replayed-by"
	// HdrReplayMAC proves a replay copy's x-replayed-from is the runbook's
	// (audit.SignReplay): its dead letter links back, its duplicate is
	// audited every time.
	HdrReplayMAC  = "x-replay-mac"
	HdrEditedFrom = "x-edited-from"
	HdrEditedBy   = "x-edited-by"
	HdrEditedAt   = "x-edited-at"
	HdrParkedFrom = "x-parked-from"
	HdrParkedBy   = "x-parked-by"
	HdrParkedAt   = "x-parked-at"

	// HdrHeadersDropped lists producer headers a copy could not carry
	// (invalid names, control bytes, over the size cap).
	HdrHeadersDropped = "x-headers-dropped"
	// HdrProducerPrefix keeps a producer's header whose name the hub owns
	// (in any letter case) under x-producer-<name>, so it can never pass
	// for the hub's.
	HdrProducerPrefix = "x-producer-"

	// Set by `edihub send`.
	HdrFilename = "x-filename"

	// Set by the Kafka bridge.
	HdrKafkaKey       = "x-kafka-key"
	HdrKafkaKeyEnc    = "x-kafka-key-encoding" // "base64" when the key is not text
	HdrKafkaTopic     = "x-kafka-topic"
	HdrKafkaPartition = "x-kafka-partition"
	HdrKafkaOffset    = "x-kafka-offset"
	HdrKafkaTimestamp = "x-kafka-timestamp" // Unix milliseconds, as Kafka keeps it
	// On the bridge's own poison copies.
	HdrKafkaTargetTopic = "x-kafka-target-topic"
	HdrBridgeRoute      = "x-bridge-route"
	HdrPayloadSize      = "x-payload-size"
	HdrPayloadTruncated = "x-payload-truncated"

	// Set by the claim check on a message whose payload would not fit the
	// server (claim.go): the payload is an object, the body a small JSON
	// stub (ClaimStub); x-payload-size is the object's size.
	HdrPayloadRef    = "x-payload-ref"    // <bucket>/<object>
	HdrPayloadSHA256 = "x-payload-sha256" // hex SHA-256 of the object
	// HdrRefusedMessages names the messages (UNH 0062, ST02) refused
	// alone in a partially accepted interchange (a profile's accept:
	// message), comma-separated, on its one dead letter.
	HdrRefusedMessages = "x-refused-messages"
)

// Server headers the hub reads or sets.
const (
	HdrMsgID   = "Nats-Msg-Id"
	HdrMsgSize = "Nats-Msg-Size" // set by JetStream on headers-only deliveries
	HdrTTL     = "Nats-TTL"
	// ServerHeaderPrefix marks headers that belong to a stored message and
	// never to a copy of it.
	ServerHeaderPrefix = "Nats-"
)

// producerSettable are x-* names a producer may set and the hub keeps as
// they are (in exactly this spelling): a drill request on a drill hub, a
// correlation id, what send and the bridge add.
var producerSettable = map[string]bool{
	HdrDrill: true, HdrCorrelationID: true, HdrFilename: true,
	HdrKafkaKey: true, HdrKafkaKeyEnc: true, HdrKafkaTopic: true, HdrKafkaPartition: true,
	HdrKafkaOffset: true, HdrKafkaTimestamp: true,
}

// hubOwned are the x-* names only the hub writes.
var hubOwned = map[string]bool{}

func init() {
	for _, n := range []string{HdrOriginalTopic, HdrOriginalStream, HdrOriginalSeq, HdrErrorClass, HdrErrorMsg,
		HdrErrorCause, HdrRetryCount, HdrAttempts, HdrFirstFailedAt, HdrDetectedAt, HdrPoisonCause, HdrPartnerID,
		HdrMessageID, HdrStage, HdrPartition, HdrFingerprint, HdrRetryTier, HdrDrillMode, HdrReplayForce,
		HdrMessageType, HdrMessageRef, HdrStandard, HdrReplayedFrom, HdrReplayedBy, HdrReplayMAC, HdrEditedFrom, HdrEditedBy,
		HdrEditedAt, HdrParkedFrom, HdrParkedBy, HdrParkedAt, HdrHeadersDropped, HdrKafkaTargetTopic,
		HdrBridgeRoute, HdrPayloadSize, HdrPayloadTruncated, HdrProcessDeaths, HdrHubMAC, HdrPayloadRef, HdrPayloadSHA256, HdrRefusedMessages} {
		hubOwned[n] = true
	}
}

// ProducerName says how a copy carries a producer's header name: as it is,
// or (for a name the hub owns, or any letter-case variant of a name the hub
// knows) under x-producer-<lower-case name>. NATS header names are
// case-sensitive, so X-Partner-Id next to x-partner-id would otherwise make
// which one a reader takes a matter of chance.
func ProducerName(name string) string {
	lower := strings.ToLower(name)
	switch {
	case producerSettable[name]:
		return name
	case hubOwned[lower] || producerSettable[lower] || strings.HasPrefix(lower, HdrProducerPrefix):
		return HdrProducerPrefix + strings.TrimPrefix(lower, HdrProducerPrefix)
	}
	return name
}

// ValidHeaderName reports whether name can be stored and re-sent: an HTTP
// token (RFC 9110) that nats.go will encode. A raw client can make the
// server accept others; a copy must not carry them.
func ValidHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// ValidHeaderValue reports whether a value can be re-sent: no CR, LF or
// other control byte but tab.
func ValidHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// HubOwned reports whether name (exactly) is one the hub writes.
func HubOwned(name string) bool { return hubOwned[name] }

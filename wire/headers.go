package wire

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
	// HdrDrill asks a --drill hub to fail on purpose (panic, hang, exit,
	// error).
	HdrDrill = "x-drill"
	// HdrDrillMode "on" marks a copy made by a hub running with --drill: only
	// then does the sandbox reproduce the drill, since a partner could send
	// an x-drill header of its own.
	HdrDrillMode = "x-drill-mode"
	// HdrHubMAC authenticates a copy the hub made: "<kid>:<hex HMAC-SHA256>"
	// with the audit keyring over the original stream and sequence, the
	// x-drill-mode and x-drill values and the payload's SHA-256. The
	// sandbox honours x-drill-mode only when it verifies.
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
	HdrEditedFrom   = "x-edited-from"
	HdrEditedBy     = "x-edited-by"
	HdrEditedAt     = "x-edited-at"
	HdrParkedFrom   = "x-parked-from"
	HdrParkedBy     = "x-parked-by"
	HdrParkedAt     = "x-parked-at"

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

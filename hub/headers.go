package hub

// Header names carried by dead letters, retries and poison copies
// (DESIGN.md). The payload travels byte for byte; these say why.
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
	HdrDrill          = "x-drill"
	// HdrDrillMode "on" marks a copy made by a hub running with --drill: only
	// then does the sandbox reproduce the drill, since a partner could send
	// an x-drill header of its own.
	HdrDrillMode = "x-drill-mode"
	HdrMsgID     = "Nats-Msg-Id"
)

// maxHeaderValue keeps error texts in headers short and safe.
const maxHeaderValue = 512

// headerSafe makes s printable ASCII on one line and bounded, since error
// messages may quote hostile input.
func headerSafe(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s) && len(out) < maxHeaderValue; i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			out = append(out, c)
		case c == '\n' || c == '\r' || c == '\t':
			out = append(out, ' ')
		default:
			const hex = "0123456789ABCDEF"
			out = append(out, '\\', 'x', hex[c>>4], hex[c&15])
		}
	}
	return string(out)
}

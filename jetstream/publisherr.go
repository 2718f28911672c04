package jetstream

import (
	"context"
	"errors"
	"strings"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// FailureKind says whose a failed publish is.
type FailureKind string

const (
	// KindMessage: the server refuses this message for what it is (too
	// large, headers over the limit, a TTL or sequence it will never
	// take): trying it again gives the same answer, so it is permanent
	// for the message.
	KindMessage FailureKind = "message"
	// KindEnvironment: the server cannot store anything right now (no
	// space, no quorum or leader, a timeout, no stream on the subject,
	// the hub's own permissions): every message would fail alike, none is
	// to blame, and the publish is tried again.
	KindEnvironment FailureKind = "environment"
)

// API error codes of nats-server (server/errors.json) the classification
// names; nats.go exports only a few of them.
const (
	codeAccountResourcesExceeded = 10002
	codeClusterNotLeader         = 10009
	codeInsufficientResources    = 10023
	codeMemoryResourcesExceeded  = 10028
	codeStorageResourcesExceeded = 10047
	codeStreamMessageExceedsMax  = 10054
	codeStreamWrongLastMsgID     = 10070
	codeStreamWrongLastSequence  = 10071
	codeStreamStoreFailed        = 10077
	codeStreamHeaderExceedsMax   = 10097
	codeStreamOffline            = 10118
	codeStreamWrongLastSeqConst  = 10164
	codeMessageTTLInvalid        = 10165
	codeMessageTTLDisabled       = 10166
	codeStreamOfflineReason      = 10194
)

// ClassifyPublish says whose a publish error is, and why in a few words
// (for a dead letter's reason or a metric's log line). An error it does
// not know is the environment's: a retry costs a round trip, a wrong dead
// letter costs an interchange; the hub bounds the retries of one message
// that fails identically (the caller's count, not this function's).
func ClassifyPublish(err error) (FailureKind, string) {
	switch {
	case errors.Is(err, nats.ErrMaxPayload):
		return KindMessage, "the message is larger than the NATS server's max_payload"
	case errors.Is(err, nats.ErrBadHeaderMsg):
		return KindMessage, "the message's headers cannot be encoded"
	case errors.Is(err, nats.ErrPermissionViolation), errors.Is(err, nats.ErrAuthorization):
		return KindEnvironment, "the hub's NATS user may not publish there (its permissions, for every message)"
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, js.ErrNoStreamResponse):
		return KindEnvironment, "no stream answered (no stream on the subject, or no leader)"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return KindEnvironment, "the server did not answer in time"
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrConnectionDraining),
		errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrDisconnected), errors.Is(err, context.Canceled):
		return KindEnvironment, "the connection to NATS is down"
	}
	var apiErr *js.APIError
	if !errors.As(err, &apiErr) {
		return KindEnvironment, "the publish failed: " + firstLine(err)
	}
	switch apiErr.ErrorCode {
	case codeStreamMessageExceedsMax:
		return KindMessage, "the message is larger than the stream's max_msg_size"
	case codeStreamHeaderExceedsMax:
		return KindMessage, "the message's headers are over the server's 64 KiB"
	case codeMessageTTLInvalid, codeMessageTTLDisabled:
		return KindMessage, "the stream refuses the message's TTL"
	case codeStreamWrongLastSequence, codeStreamWrongLastSeqConst, codeStreamWrongLastMsgID:
		return KindMessage, "the stream refuses the message's expected last sequence"
	case codeInsufficientResources, codeStorageResourcesExceeded, codeMemoryResourcesExceeded, codeAccountResourcesExceeded:
		return KindEnvironment, "the server has no room (" + apiErr.Description + ")"
	case codeStreamStoreFailed:
		return KindEnvironment, "the stream cannot store (" + apiErr.Description + ")"
	case codeClusterNotLeader, codeStreamOffline, codeStreamOfflineReason:
		return KindEnvironment, "the stream has no quorum (" + apiErr.Description + ")"
	}
	if apiErr.Code >= 500 {
		return KindEnvironment, "the server failed (" + apiErr.Description + ")"
	}
	return KindEnvironment, "the server refused the publish (" + apiErr.Description + ")"
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

package jetstream

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

func apiErr(code js.ErrorCode, status int, desc string) error {
	return fmt.Errorf("publish edi.parsed.ACME.INVOIC (id x): %w", &js.APIError{ErrorCode: code, Code: status, Description: desc})
}

func TestClassifyPublish(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want FailureKind
		says string
	}{
		{"over max_payload (the client refuses it)", fmt.Errorf("publish x: %w", nats.ErrMaxPayload), KindMessage, "max_payload"},
		{"over the stream's max_msg_size", apiErr(10054, 400, "message size exceeds maximum allowed"), KindMessage, "max_msg_size"},
		{"headers over 64 KiB", apiErr(10097, 400, "header size exceeds maximum allowed of 64k"), KindMessage, "headers"},
		{"a TTL the stream refuses", apiErr(10166, 400, "per-message TTL is disabled"), KindMessage, "TTL"},
		{"a wrong expected sequence", apiErr(10071, 400, "wrong last sequence: 4"), KindMessage, "sequence"},
		{"bad headers", nats.ErrBadHeaderMsg, KindMessage, "headers"},
		{"no space", apiErr(10047, 500, "insufficient storage resources available"), KindEnvironment, "no room"},
		{"insufficient resources", apiErr(10023, 503, "insufficient resources"), KindEnvironment, "no room"},
		{"stream full (discard new)", apiErr(10077, 503, "maximum bytes exceeded"), KindEnvironment, "maximum bytes exceeded"},
		{"account limits", apiErr(10002, 400, "resource limits exceeded for account"), KindEnvironment, "no room"},
		{"no quorum", apiErr(10009, 500, "JetStream cluster can not handle request"), KindEnvironment, "quorum"},
		{"stream offline", apiErr(10118, 500, "stream is offline"), KindEnvironment, "quorum"},
		{"permissions", fmt.Errorf("publish x: %w", nats.ErrPermissionViolation), KindEnvironment, "permissions"},
		{"no responders", fmt.Errorf("publish x: %w", nats.ErrNoResponders), KindEnvironment, "no stream"},
		{"no stream response", js.ErrNoStreamResponse, KindEnvironment, "no stream"},
		{"timeout", fmt.Errorf("publish x: %w", context.DeadlineExceeded), KindEnvironment, "in time"},
		{"nats timeout", nats.ErrTimeout, KindEnvironment, "in time"},
		{"connection closed", nats.ErrConnectionClosed, KindEnvironment, "connection"},
		{"another 5xx", apiErr(10999, 503, "something new"), KindEnvironment, "something new"},
		{"an unknown error", fmt.Errorf("publish x: boom\nmore"), KindEnvironment, "boom"},
	} {
		kind, why := ClassifyPublish(c.err)
		if kind != c.want || !strings.Contains(why, c.says) || strings.Contains(why, "\n") {
			t.Errorf("%s: got %s %q, want %s saying %q", c.name, kind, why, c.want, c.says)
		}
	}
}

package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
)

func TestStorageFault(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"ENOSPC", fmt.Errorf("write: %w", syscall.ENOSPC), true},
		{"insufficient resources", &js.APIError{Code: 503, ErrorCode: 10023, Description: "insufficient resources"}, true},
		{"store limit", &js.APIError{Code: 500, ErrorCode: 10047, Description: "insufficient storage resources available"}, true},
		{"full stream", &js.APIError{Code: 503, ErrorCode: 10077, Description: "maximum bytes exceeded"}, true},
		{"formatted with %v", fmt.Errorf("serve: %v", "stream DLQ: insufficient resources"), true},
		{"no space text", errors.New("no space left on device"), true},
		{"timeout", context.DeadlineExceeded, false},
		{"not enabled", &js.APIError{Code: 503, ErrorCode: 10076, Description: "jetstream not enabled"}, false},
		{"bad subject", &js.APIError{Code: 400, ErrorCode: 10054, Description: "invalid subject"}, false},
		{"nil", nil, false},
	} {
		if got := ejs.StorageFault(tc.err); got != tc.want {
			t.Errorf("%s: StorageFault = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package jetstream

import (
	"errors"
	"strings"
	"syscall"

	js "github.com/nats-io/nats.go/jetstream"
)

// storeFaultTexts are how the same faults read once an error was
// formatted with %v (serve's exit errors) or came back as a server log
// line or a plain publish error.
var storeFaultTexts = []string{
	"no space left on device",
	"insufficient resources",
	"resources exceeded",
	"insufficient storage",
}

// StorageFault says whether err is the store's refusal to write (a full
// disk, JetStream's store or account limit, a store that failed and
// disabled JetStream): the environment's fault, never the message's.
// A missing quorum reads as a timeout, and a JetStream that is not
// enabled may be a server's configuration: the caller decides what those
// mean (Transient).
func StorageFault(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	var api *js.APIError // the codes are publisherr.go's, the one table of them
	if errors.As(err, &api) {
		switch api.ErrorCode {
		case codeAccountResourcesExceeded, codeInsufficientResources, codeMemoryResourcesExceeded,
			codeStorageResourcesExceeded, codeStreamStoreFailed:
			return true
		}
	}
	msg := strings.ToLower(err.Error())
	for _, t := range storeFaultTexts {
		if strings.Contains(msg, t) {
			return true
		}
	}
	return false
}

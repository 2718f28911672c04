package headers

import (
	"cmp"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// SetPoison writes the quarantine headers of a poison copy: cause,
// attempts, when, the error's class ("crash" when none), its message
// (escaped) and the stage.
func SetPoison(h nats.Header, cause, class, message, stage string, attempts int) {
	h.Set(wire.HdrPoisonCause, cause)
	h.Set(wire.HdrAttempts, strconv.Itoa(attempts))
	h.Set(wire.HdrDetectedAt, time.Now().UTC().Format(time.RFC3339Nano))
	h.Set(wire.HdrErrorClass, cmp.Or(class, "crash"))
	h.Set(wire.HdrErrorMsg, escape.Header(message))
	h.Set(wire.HdrStage, stage)
}

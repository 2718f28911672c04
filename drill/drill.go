package drill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/wire"
	"github.com/rs/zerolog"
)

// Drill kinds, set in the x-drill header of a message.
const (
	Panic = "panic" // the handler panics
	Hang  = "hang"  // the handler ignores its deadline for twice its length
	Exit  = "exit"  // the process kills itself with SIGKILL
	Error = "error" // the handler returns a permanent business error
)

// Kinds lists the valid x-drill values.
var Kinds = []string{Panic, Hang, Exit, Error}

// Middleware is the drill behind `serve --drill`: it lets operators and
// tests make poison on purpose. Messages without x-drill pass through.
func Middleware(log zerolog.Logger) hub.Middleware {
	return func(next hub.Handler) hub.Handler {
		return func(ctx context.Context, m *hub.Message) error {
			kind := m.Header.Get(wire.HdrDrill)
			if kind == "" {
				return next(ctx, m)
			}
			log.Warn().Str("drill", kind).Str("partner", m.Partner).Uint64("seq", m.Seq).Uint64("delivery", m.Delivered).Msg("drill message")
			switch kind {
			case Panic:
				panic("drill: panic on purpose")
			case Hang:
				dl, ok := ctx.Deadline()
				wait := time.Minute
				if ok {
					wait = 2 * time.Until(dl)
				}
				time.Sleep(wait) // ignores ctx on purpose, like a stuck parser
				return nil
			case Exit:
				killSelf()
			case Error:
				return drillError()
			}
			return next(ctx, m)
		}
	}
}

// killSelf ends the process the way the OOM killer or a supervisor does:
// no deferred function, no clean-up, no outcome recorded.
func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	time.Sleep(time.Minute) // SIGKILL is not instant; never return
}

func drillError() error {
	return hub.PermanentError(wire.CauseBusiness, errors.New("drill: permanent error on purpose"))
}

// Reproduce does in the child what the drill did in the hub, in the
// form that the sandbox's caps catch: a hang spins (CPU cap) rather than
// sleeps, so the report shows where it spun.
func Reproduce(kind string) error {
	switch kind {
	case Panic:
		panic("drill: panic on purpose")
	case Hang:
		n := 0
		deadline := time.Now().Add(time.Hour)
		for time.Now().Before(deadline) { // spin until RLIMIT_CPU fires
			n++
		}
		return fmt.Errorf("drill: hang ended after %d spins", n)
	case Exit:
		killSelf()
	case Error:
		return drillError()
	}
	return nil
}

package hub

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/edihub/edihub/counter"
)

// outcome is how one attempt of the pipeline ended.
type outcome struct {
	ok          bool
	stage       string // the stage that failed
	kind        counter.Kind
	failure     *Failure
	errType     string
	msg         string
	stack       string
	fingerprint string
}

// executor runs the stages of one attempt under a deadline.
type executor struct {
	stages    []Stage
	deadline  time.Duration
	heartbeat time.Duration
	classMap  map[string]string
	// abandoned counts handlers that overran their deadline and are still
	// running; limit bounds them (see onLeak).
	abandoned *atomic.Int64
	limit     int64
	onLeak    func(n int64)
}

// run executes the stages in order. inProgress is called periodically so
// that the server does not redeliver a long but healthy attempt.
func (e *executor) run(m *Message, inProgress func()) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), e.deadline)
	defer cancel()
	done := make(chan outcome, 1) // buffered: an abandoned handler never blocks
	current := new(atomic.Value)
	current.Store(e.stages[0].Name)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- panicOutcome(current.Load().(string), r)
			}
		}()
		for _, st := range e.stages {
			current.Store(st.Name)
			if err := st.Handle(ctx, m); err != nil {
				done <- e.errorOutcome(st.Name, err)
				return
			}
		}
		done <- outcome{ok: true}
	}()

	tick := time.NewTicker(e.heartbeat)
	defer tick.Stop()
	timer := time.NewTimer(e.deadline)
	defer timer.Stop()
	for {
		select {
		case o := <-done:
			return o
		case <-tick.C:
			inProgress()
		case <-timer.C:
			return e.timeoutOutcome(current.Load().(string), done)
		}
	}
}

// timeoutOutcome gives up on a handler that overran. It may still be
// running (Go cannot stop a goroutine); it is counted until it returns, and
// when too many are running onLeak lets the process exit so that its
// supervisor restarts it with a clean slate. The attempt is recorded as a
// timeout before that, so the count goes on after the restart.
func (e *executor) timeoutOutcome(stage string, done <-chan outcome) outcome {
	n := e.abandoned.Add(1)
	go func() {
		<-done
		e.abandoned.Add(-1)
	}()
	if n > e.limit && e.onLeak != nil {
		defer e.onLeak(n)
	}
	msg := fmt.Sprintf("stage %s overran its deadline of %v", stage, e.deadline)
	return outcome{
		stage: stage, kind: counter.KindTimeout, errType: "timeout", msg: msg,
		failure:     &Failure{Class: Unclassified, Cause: CauseUnknown, Err: fmt.Errorf("%s", msg)},
		fingerprint: fingerprint(counter.KindTimeout, "timeout", stage, nil),
	}
}

func (e *executor) errorOutcome(stage string, err error) outcome {
	f := classify(err, e.classMap)
	t := errorType(err)
	return outcome{
		stage: stage, kind: counter.KindError, failure: f, errType: t, msg: err.Error(),
		fingerprint: fingerprint(counter.KindError, t, err.Error(), nil),
	}
}

func panicOutcome(stage string, r any) outcome {
	stack := string(debug.Stack())
	frames := panicFrames()
	msg := fmt.Sprintf("panic in stage %s: %v", stage, r)
	return outcome{
		stage: stage, kind: counter.KindPanic, errType: fmt.Sprintf("panic(%T)", r), msg: msg, stack: stack,
		failure:     &Failure{Class: Unclassified, Cause: CauseUnknown, Err: fmt.Errorf("%s", msg)},
		fingerprint: fingerprint(counter.KindPanic, fmt.Sprintf("%T", r), fmt.Sprint(r), frames),
	}
}

// panicFrames returns the functions between the panic and the stage
// runner, innermost first, without the runtime's own frames.
func panicFrames() []string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var out []string
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && !strings.Contains(f.Function, "hub.panicOutcome") {
			out = append(out, f.Function)
		}
		if !more || len(out) >= 5 {
			return out
		}
	}
}

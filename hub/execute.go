package hub

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
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

// watch is the timer side of one attempt.
type watch struct {
	mu       sync.Mutex
	finished bool
	timedOut bool
	timer    *time.Timer
	start    time.Time
	stage    atomic.Int32 // index of the running stage
	cancel   context.CancelFunc
}

// run executes the stages inline on the caller's goroutine: the happy path
// has no goroutine hand-off, which matters when every message is a round
// trip (MaxAckPending=1). A timer sends progress so the server does not
// redeliver a long but healthy attempt, and watches the deadline. If the
// handler overruns, the timer cancels its context and calls onTimeout with
// the timeout outcome on the timer's goroutine; when the handler finally
// returns, run reports abandoned and its result is discarded, because
// onTimeout already decided the message's fate.
func (e *executor) run(m *Message, inProgress func(), onTimeout func(outcome)) (o outcome, abandoned bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &watch{start: time.Now(), cancel: cancel}
	w.mu.Lock()
	w.timer = time.AfterFunc(min(e.heartbeat, e.deadline), func() { e.tick(w, inProgress, onTimeout) })
	w.mu.Unlock()

	o = e.runStages(ctx, m, w)

	w.mu.Lock()
	w.finished = true
	w.timer.Stop()
	timedOut := w.timedOut
	w.mu.Unlock()
	if timedOut {
		e.abandoned.Add(-1)
		return o, true
	}
	return o, false
}

func (e *executor) tick(w *watch, inProgress func(), onTimeout func(outcome)) {
	w.mu.Lock()
	if w.finished {
		w.mu.Unlock()
		return
	}
	if left := e.deadline - time.Since(w.start); left > 0 {
		inProgress()
		w.timer.Reset(min(e.heartbeat, left))
		w.mu.Unlock()
		return
	}
	w.timedOut = true
	w.mu.Unlock()
	w.cancel()
	onTimeout(e.timeoutOutcome(e.stages[w.stage.Load()].Name))
}

// runStages runs the stages in order and turns a panic into an outcome.
func (e *executor) runStages(ctx context.Context, m *Message, w *watch) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = panicOutcome(e.stages[w.stage.Load()].Name, r)
		}
	}()
	for i, st := range e.stages {
		w.stage.Store(int32(i))
		if err := st.Handle(ctx, m); err != nil {
			return e.errorOutcome(st.Name, err)
		}
	}
	return outcome{ok: true}
}

// timeoutOutcome gives up on a handler that overran. It may still be
// running (Go cannot stop a goroutine); it is counted until it returns, and
// when too many are running onLeak lets the process exit so that its
// supervisor restarts it with a clean slate. The attempt is recorded as a
// timeout before that, so the count goes on after the restart.
func (e *executor) timeoutOutcome(stage string) outcome {
	n := e.abandoned.Add(1)
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

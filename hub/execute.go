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
	"github.com/edihub/edihub/wire"
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

// watchdog is the timer side of a worker loop's attempts. One per loop,
// reused for every message: a timer per message would cost a runtime timer
// insertion and deletion on the happy path. Its context is cancelled only
// when an attempt overruns; the loop is then abandoned with it and its
// replacement gets a new watchdog.
type watchdog struct {
	e      *executor
	ctx    context.Context
	cancel context.CancelFunc
	timer  *time.Timer
	stage  atomic.Int32 // index of the running stage

	mu         sync.Mutex
	active     bool
	timedOut   bool
	start      time.Time
	inProgress func()
	onTimeout  func(outcome)
}

func (e *executor) newWatchdog() *watchdog {
	w := &watchdog{e: e}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.timer = time.AfterFunc(time.Hour, w.tick)
	w.timer.Stop()
	return w
}

// close releases the timer of a loop that ended normally.
func (w *watchdog) close() {
	w.timer.Stop()
	w.cancel()
}

// run executes the stages inline on the caller's goroutine (the worker
// that took the message from its lane): no further hand-off. The watchdog sends progress so the server does
// not redeliver a long but healthy attempt, and watches the deadline. If
// the handler overruns, the watchdog cancels its context and calls
// onTimeout with the timeout outcome on the timer's goroutine; when the
// handler finally returns, run reports abandoned and its result is
// discarded, because onTimeout already decided the message's fate.
func (e *executor) run(w *watchdog, m *Message, inProgress func(), onTimeout func(outcome)) (o outcome, abandoned bool) {
	w.mu.Lock()
	w.active, w.timedOut, w.start = true, false, time.Now()
	w.inProgress, w.onTimeout = inProgress, onTimeout
	w.timer.Reset(min(e.heartbeat, e.deadline))
	w.mu.Unlock()

	o = e.runStages(w.ctx, m, w)

	w.mu.Lock()
	w.active = false
	w.timer.Stop()
	timedOut := w.timedOut
	w.mu.Unlock()
	if timedOut {
		e.abandoned.Add(-1)
		return o, true
	}
	return o, false
}

func (w *watchdog) tick() {
	w.mu.Lock()
	if !w.active {
		w.mu.Unlock()
		return
	}
	if left := w.e.deadline - time.Since(w.start); left > 0 {
		w.inProgress()
		w.timer.Reset(min(w.e.heartbeat, left))
		w.mu.Unlock()
		return
	}
	w.timedOut, w.active = true, false
	onTimeout := w.onTimeout
	w.mu.Unlock()
	w.cancel()
	onTimeout(w.e.timeoutOutcome(w.e.stages[w.stage.Load()].Name))
}

// runStages runs the stages in order and turns a panic into an outcome.
func (e *executor) runStages(ctx context.Context, m *Message, w *watchdog) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = panicOutcome(e.stages[w.stage.Load()].Name, r)
		}
	}()
	for i, st := range e.stages {
		w.stage.Store(int32(i))
		m.stage = st.Name
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
		failure:     &Failure{Class: Unclassified, Cause: wire.CauseUnknown, Err: fmt.Errorf("%s", msg)},
		fingerprint: fingerprint(counter.KindTimeout, "timeout", stage, nil),
	}
}

func (e *executor) errorOutcome(stage string, err error) outcome {
	return classifiedOutcome(stage, err, e.classMap)
}

// failedOutcome is the outcome of an error the hub itself found.
func failedOutcome(stage string, err error) outcome { return classifiedOutcome(stage, err, nil) }

func classifiedOutcome(stage string, err error, classMap map[string]string) outcome {
	f := Classify(err, classMap)
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
		failure:     &Failure{Class: Unclassified, Cause: wire.CauseUnknown, Err: fmt.Errorf("%s", msg)},
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

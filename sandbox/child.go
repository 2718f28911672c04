package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
)

// Analyzer is the work done in the child: typically the guard, the parser
// and the stage that failed, run on the quarantined payload. It reports how
// far it got through progress (cheap enough to call per segment: one small
// write on a pipe) and returns a summary or the error it ran into.
// progress may be called from several goroutines.
type Analyzer func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error)

// ChildMain is the child side of Run: `edihub sandbox exec` calls
// os.Exit(sandbox.ChildMain(analyzer)). It
//
//  1. closes every descriptor it inherited besides its pipes, limits itself
//     (RLIMIT_DATA/AS/CPU from the protocol environment) and sets a matching
//     soft Go memory limit,
//  2. isolates itself (no_new_privs, seccomp, Landlock; see doc.go),
//  3. tells the parent it is ready, and blocks on stdin: the parent verifies
//     the limits with prlimit(2) before it writes a single payload byte,
//  4. reads the payload, runs a, forwards progress, recovers a panic with its
//     stack, and sends the final record on the report pipe.
//
// The returned exit code backs up the final record; the record is what the
// parent classifies on.
func ChildMain(a Analyzer) int {
	code, err := runChild(a)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return code
}

func runChild(a Analyzer) (int, error) {
	if errUnsupported != nil {
		return exitProtocol, errUnsupported
	}
	if v := os.Getenv(envProtocol); v != protocolVersion {
		return exitProtocol, fmt.Errorf("sandbox: not started by sandbox.Run (%s=%q, want %q)", envProtocol, v, protocolVersion)
	}
	// Before anything else: descriptors inherited without close-on-exec
	// (the hub's, or its parent's) must not be reachable by the analysis.
	fd, err := strconv.Atoi(os.Getenv(envReportFD))
	if err != nil || fd < 3 {
		return exitProtocol, fmt.Errorf("sandbox: bad %s=%q", envReportFD, os.Getenv(envReportFD))
	}
	fdsClosed, fdsErr := closeInheritedFDs(fd)

	memLimit, err := strconv.ParseInt(os.Getenv(envMemory), 10, 64)
	if err != nil || memLimit <= 0 {
		return exitProtocol, fmt.Errorf("sandbox: bad %s=%q", envMemory, os.Getenv(envMemory))
	}
	cpuSec, err := strconv.ParseInt(os.Getenv(envCPU), 10, 64)
	if err != nil || cpuSec <= 0 {
		return exitProtocol, fmt.Errorf("sandbox: bad %s=%q", envCPU, os.Getenv(envCPU))
	}
	pipe := os.NewFile(uintptr(fd), "sandbox-report")
	if pipe == nil {
		return exitProtocol, fmt.Errorf("sandbox: report fd %d is not open", fd)
	}
	w := &eventWriter{w: pipe}

	// Limits first, payload later. A failure here is reported, not fatal:
	// the parent then enforces the limits itself or refuses to go on.
	ready := &event{T: evReady}
	lim, err := applySelfLimits(memLimit, cpuSec)
	if err != nil {
		ready.LimitsErr = err.Error()
	} else {
		ready.Limits = &lim
	}
	// A soft limit below the hard cap makes the GC work harder before the
	// cap is reached, so an analysis with lots of garbage but a bounded live
	// heap is not misreported as memory-cap. An unbounded one still hits it.
	debug.SetMemoryLimit(memLimit - memLimit/8)

	// Isolation after the limits (which read /proc) and before "ready":
	// the parent verifies it with the limits, then releases the payload.
	keepSelfStatus() // for the peak RSS at the end, once /proc is out of reach
	ready.Isolation = isolateSelf(fdsClosed, fdsErr)

	onCPULimit(func() {
		buf := make([]byte, 4*maxStackBytes)
		buf = buf[:runtime.Stack(buf, true)]
		_ = w.send(&event{T: evCPULimit, Stack: truncate(string(buf), maxStackBytes), PeakRSSBytes: selfPeakRSS()})
		os.Exit(exitCPULimit)
	})
	if err := w.send(ready); err != nil {
		return exitProtocol, err
	}

	// Blocks until the parent has verified the limits and writes the payload.
	payload, err := io.ReadAll(os.Stdin)
	if err != nil {
		return exitProtocol, fmt.Errorf("sandbox: read payload from stdin: %w", err)
	}

	final := analyze(a, payload, func(p Progress) {
		_ = w.send(&event{T: evProgress, Progress: &p})
	})
	final.PeakRSSBytes = selfPeakRSS()
	err = w.send(final) // the exit code below still tells the parent what happened
	switch final.T {
	case evResult:
		return exitOK, err
	case evError:
		return exitAnalysisError, err
	default:
		return exitPanic, err
	}
}

// analyze runs a in its own goroutine so that runtime.Goexit inside it is
// reported instead of deadlocking the child, and returns the final record.
func analyze(a Analyzer, payload []byte, progress func(Progress)) *event {
	done := make(chan *event, 1)
	go func() {
		returned := false
		defer func() {
			if returned {
				return
			}
			r := recover()
			e := &event{T: evPanic, Stack: truncate(string(debug.Stack()), maxStackBytes)}
			switch {
			case r == nil:
				e.PanicValue = "runtime.Goexit called by the analysis"
			default:
				e.PanicValue = truncate(fmt.Sprint(r), maxErrorBytes)
				if err, ok := r.(error); ok {
					e.ErrorClass = errorClass(err)
				} else {
					e.ErrorClass = fmt.Sprintf("%T", r)
				}
			}
			done <- e
		}()
		res, err := a(context.Background(), payload, progress)
		returned = true
		if err != nil {
			done <- &event{T: evError, Error: truncate(err.Error(), maxErrorBytes), ErrorClass: errorClass(err), Cause: errorCause(err)}
			return
		}
		done <- &event{T: evResult, Result: &res}
	}()
	return <-done
}

// errorClass lets the hub's errors name their class (e.g. "permanent",
// "transient") without the sandbox importing the hub.
func errorClass(err error) string {
	var c interface{ ErrorClass() string }
	if errors.As(err, &c) {
		return c.ErrorClass()
	}
	return fmt.Sprintf("%T", err)
}

func errorCause(err error) string {
	var c interface{ ErrorCause() string }
	if errors.As(err, &c) {
		return c.ErrorCause()
	}
	return ""
}

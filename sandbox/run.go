package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"
)

// InfraError is a failure of the sandbox itself, not of the analysed
// message: the child could not be started, never completed the handshake,
// or its limits could not be put in place. These are what the Breaker
// counts. A child that crashes, hangs or runs out of memory after it got the
// payload is a Report, never an InfraError.
type InfraError struct {
	Op     string // "start", "handshake", "limits", "isolation", "pipe"
	Err    error
	Stderr string // bounded child stderr, if any, to diagnose start-up failures
}

func (e *InfraError) Error() string {
	msg := "sandbox: " + e.Op + ": " + e.Err.Error()
	if e.Stderr != "" {
		msg += " (child stderr: " + truncate(e.Stderr, 512) + ")"
	}
	return msg
}

func (e *InfraError) Unwrap() error { return e.Err }

const (
	// sampleEvery is how often the parent reads the child's VmHWM. The last
	// sample before death is the peak unless the child grew within it.
	sampleEvery = 20 * time.Millisecond
	// drainTimeout bounds how long Run waits for the pipes to reach EOF
	// after the child is gone (a grandchild that escaped the process group
	// could hold them open).
	drainTimeout = 2 * time.Second
)

// Run runs one analysis in a child process described by spec and returns
// the forensic report. The error is non-nil only if the sandbox itself
// failed (*InfraError), the spec is invalid, or ctx was cancelled; in those
// cases there is no report. Run blocks until the child is gone.
//
// The payload is written to the child's stdin only after the child has
// signalled readiness and the parent has verified (and, if needed, lowered)
// its resource limits with prlimit(2); see doc.go.
func Run(ctx context.Context, spec *Spec, payload []byte) (*Report, error) {
	if errUnsupported != nil {
		return nil, errUnsupported
	}
	if spec == nil {
		spec = &Spec{}
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	s := spec.withDefaults()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sandbox: not started: %w", err)
	}

	// Pdeathsig fires when the thread that forked the child exits, not the
	// process. Pinning this goroutine to its thread until the child is reaped
	// keeps any other goroutine from locking and then ending that thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	iso, err := prepareIsolation(&s)
	if err != nil {
		return nil, &InfraError{Op: "isolation", Err: err}
	}
	// Run returns only after the child is reaped, so nothing uses the
	// directory any more; a failure to remove it does not change the report.
	defer iso.cleanup()

	execPath, exe, err := iso.openBinary(s.Path)
	if err != nil {
		return nil, &InfraError{Op: "start", Err: fmt.Errorf("start %s: %w", s.Path, err)}
	}
	extra := []*os.File{nil} // fd 3 = reportFD, set below
	if exe != nil {
		defer exe.Close()
		extra = append(extra, exe) // execFD
	}

	p, err := newPipes()
	if err != nil {
		return nil, &InfraError{Op: "pipe", Err: err}
	}
	defer p.closeParent()
	extra[0] = p.repW

	var notes []string
	newCmd := func() *exec.Cmd {
		return &exec.Cmd{
			Path:        execPath,
			Args:        append([]string{s.Path}, s.Args...),
			Env:         s.childEnv(), // never nil: nil would inherit os.Environ()
			Dir:         iso.dir,
			Stdin:       p.stdinR,
			Stdout:      p.outW, // stdout and stderr interleaved in one capture
			Stderr:      p.outW,
			ExtraFiles:  extra, // os/exec closes the other close-on-exec fds
			SysProcAttr: iso.sysProcAttr(),
		}
	}
	cmd := newCmd()
	started := time.Now()
	err = cmd.Start()
	if err != nil && iso.retryWithoutNetns(err) {
		notes = append(notes, fmt.Sprintf("no network namespace: %v", err))
		cmd = newCmd()
		started = time.Now()
		err = cmd.Start()
	}
	if err != nil {
		p.closeChild()
		return nil, &InfraError{Op: "start", Err: fmt.Errorf("start %s: %w", s.Path, err)}
	}
	p.closeChild()
	c := &child{spec: &s, cmd: cmd, pid: cmd.Process.Pid, pipes: p, iso: iso, stderr: newHeadTail(s.MaxStderrBytes), notes: notes}
	c.report = &Report{StartedAt: started, PayloadBytes: len(payload)}
	return c.supervise(ctx, payload, started)
}

// pipes are the three pipes between parent and child.
type pipes struct {
	stdinR, stdinW *os.File // payload, parent → child
	repR, repW     *os.File // records, child → parent (fd 3)
	outR, outW     *os.File // stdout+stderr, child → parent
}

func newPipes() (*pipes, error) {
	p := &pipes{}
	var err error
	if p.stdinR, p.stdinW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	if p.repR, p.repW, err = os.Pipe(); err != nil {
		p.closeChild()
		p.closeParent()
		return nil, fmt.Errorf("report pipe: %w", err)
	}
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		p.closeChild()
		p.closeParent()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	return p, nil
}

// closeChild closes the parent's copies of the child's ends, so that the
// parent sees EOF once the child (and everything it spawned) is gone.
func (p *pipes) closeChild() {
	for _, f := range []*os.File{p.stdinR, p.repW, p.outW} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeParent() {
	for _, f := range []*os.File{p.stdinW, p.repR, p.outR} {
		if f != nil {
			f.Close()
		}
	}
}

// child is the parent's bookkeeping for one running child.
type child struct {
	spec   *Spec
	cmd    *exec.Cmd
	pid    int
	pipes  *pipes
	iso    *isoSetup
	stderr *headTail
	report *Report

	mu       sync.Mutex
	final    *event
	progress *Progress
	notes    []string
}

func (c *child) notef(format string, args ...any) {
	c.mu.Lock()
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

func (c *child) supervise(ctx context.Context, payload []byte, started time.Time) (*Report, error) {
	readyC := make(chan *event, 1)
	repDone := make(chan struct{})
	go func() {
		defer close(repDone)
		err := readEvents(c.pipes.repR, c.spec.MaxReportBytes, func(e *event) {
			c.mu.Lock()
			defer c.mu.Unlock()
			switch {
			case e.T == evReady:
				select {
				case readyC <- e:
				default:
				}
			case e.T == evProgress && e.Progress != nil:
				c.progress = e.Progress
			case e.final() && c.final == nil:
				c.final = e
			}
		}, func(err error) { c.notef("report pipe: %v", err) })
		if err != nil && !errors.Is(err, os.ErrClosed) {
			c.notef("report pipe: %v", err)
		}
	}()
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		_, _ = io.Copy(c.stderr, c.pipes.outR) // only this goroutine writes c.stderr
	}()

	exitedC := make(chan error, 1)
	go func() { exitedC <- waitExited(c.pid) }()

	var peak, lastData int64
	stopSampler, samplerDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(samplerDone)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			hwm, data := sampleMem(c.pid)
			peak = max(peak, hwm)
			if data > 0 {
				lastData = data
			}
			select {
			case <-stopSampler:
				return
			case <-t.C:
			}
		}
	}()

	timer := time.NewTimer(c.spec.Timeout)
	defer timer.Stop()
	kill := func() {
		_ = c.cmd.Process.Kill() // pidfd-based: cannot hit a recycled pid
		killGroup(c.pid)         // and whatever it spawned
	}
	var (
		released, wallKilled, cancelled bool
		infra                           *InfraError
		writeDone                       = make(chan struct{})
	)
	for exited := false; !exited; {
		select {
		case ev := <-readyC:
			lim, err := enforceLimits(c.pid, c.spec.MemoryLimit, int64(c.spec.cpuSeconds()))
			switch {
			case err == nil:
			case ev.Limits != nil:
				lim = *ev.Limits
				c.notef("parent could not verify the limits (%v); relying on the child's own setrlimit", err)
			default:
				infra = &InfraError{Op: "limits", Err: fmt.Errorf("child: %s; parent: %w", ev.LimitsErr, err)}
				kill()
				continue
			}
			if ev.Limits != nil && lim.DataBytes == ev.Limits.DataBytes {
				// The child's own, earlier measurement defined the limit.
				lim.BaselineDataBytes = ev.Limits.BaselineDataBytes
				lim.BaselineVMBytes = ev.Limits.BaselineVMBytes
			}
			lim.MemoryBytes = c.spec.MemoryLimit
			c.report.Limits = lim
			c.report.Isolation = verifyIsolation(c.pid, ev.Isolation, c.iso)
			if m := c.report.Isolation.missing(c.spec.RequireIsolation); m != "" {
				infra = &InfraError{Op: "isolation", Err: fmt.Errorf("required isolation not in force: %s", m)}
				kill()
				continue
			}
			released = true
			go func() {
				defer close(writeDone)
				_, err := c.pipes.stdinW.Write(payload)
				if cerr := c.pipes.stdinW.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					// EPIPE: the child died before reading everything. Its
					// death is the finding; the write error is a footnote.
					c.notef("writing the payload: %v", err)
				}
			}()
		case err := <-exitedC:
			if err != nil {
				c.notef("waitid: %v", err)
			}
			exited = true
		case <-timer.C:
			wallKilled = true
			kill()
		case <-ctx.Done():
			cancelled = true
			kill()
		}
	}
	wall := time.Since(started)
	close(stopSampler)
	<-samplerDone
	killGroup(c.pid) // leftovers, while the zombie leader still holds the pgid
	waitErr := c.cmd.Wait()
	if c.cmd.ProcessState == nil {
		return nil, &InfraError{Op: "wait", Err: waitErr}
	}
	c.drain(repDone, outDone)
	if released {
		<-writeDone // the child is gone, so the write has failed or finished
	}

	switch {
	case cancelled:
		return nil, fmt.Errorf("sandbox: run cancelled: %w", context.Cause(ctx))
	case infra != nil:
		infra.Stderr = c.stderr.String()
		return nil, infra
	case !released:
		why := "child exited before it was ready"
		if wallKilled {
			why = fmt.Sprintf("child not ready within %s", c.spec.Timeout)
		}
		return nil, &InfraError{Op: "handshake", Err: errors.New(why + " (is it calling sandbox.ChildMain?)"), Stderr: c.stderr.String()}
	}

	r := c.report
	r.WallTime = wall
	var o observed
	o.exitCode, o.signal, o.cpu = exitInfo(c.cmd.ProcessState)
	c.mu.Lock()
	o.final, o.progress = c.final, c.progress
	r.Notes = append(r.Notes, c.notes...)
	c.mu.Unlock()
	if o.final != nil {
		peak = max(peak, o.final.PeakRSSBytes)
	}
	o.wallKilled, o.peakRSS, o.lastData = wallKilled, peak, lastData
	o.stderr, o.crash = c.stderr.String(), c.stderr.Crash()
	o.memLimit, o.cpuLimit = c.spec.MemoryLimit, time.Duration(r.Limits.CPUSeconds)*time.Second
	o.dataLimit = r.Limits.DataBytes
	r.ExitCode, r.Signal, r.CPUTime, r.PeakRSSBytes = o.exitCode, o.signal, o.cpu, peak
	r.Stderr, r.StderrBytes = o.stderr, c.stderr.total
	classify(&o, r)
	r.summarize()
	return r, nil
}

// drain waits for both readers to see EOF, and unblocks them if something
// that escaped the process group still holds the pipes.
func (c *child) drain(repDone, outDone chan struct{}) {
	deadline := time.NewTimer(drainTimeout)
	defer deadline.Stop()
	for _, done := range []chan struct{}{repDone, outDone} {
		select {
		case <-done:
		case <-deadline.C:
			c.notef("pipes still open %s after the child exited; closed them", drainTimeout)
			c.pipes.repR.Close()
			c.pipes.outR.Close()
			<-repDone
			<-outDone
			return
		}
	}
}

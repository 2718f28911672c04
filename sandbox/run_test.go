package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRunParsedFine(t *testing.T) {
	t.Parallel()
	r := run(t, testSpec(t, "fine"), "UNA:+.? 'UNB+UNOC:3'")
	wantOutcome(t, r, OutcomeParsedFine)
	if r.Result == nil || r.Result.Summary != "1 message" || r.Result.Details["bytes"] != "20" {
		t.Errorf("result %+v, want the analyzer's summary and the payload size", r.Result)
	}
	if !r.HasProgress || r.Progress.Segment != 3 || r.Progress.Offset != 30 {
		t.Errorf("progress %+v, want the last one reported", r.Progress)
	}
	if r.ExitCode != 0 || r.Signal != "" {
		t.Errorf("exit %d signal %q", r.ExitCode, r.Signal)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("report does not serialise: %v", err)
	}
}

func TestRunReproducedError(t *testing.T) {
	t.Parallel()
	r := run(t, testSpec(t, "error"), "x")
	wantOutcome(t, r, OutcomeReproducedError)
	if r.Error != "parse interchange: segment 3: UNH missing" || r.ErrorClass != "permanent" || r.Cause != "schema" {
		t.Errorf("error %q class %q cause %q", r.Error, r.ErrorClass, r.Cause)
	}
	if r.Progress != (Progress{Segment: 3, Offset: 42, Stage: "parse", Note: "UNH"}) {
		t.Errorf("progress %+v", r.Progress)
	}
	if r.ExitCode != exitAnalysisError {
		t.Errorf("exit code %d, want %d", r.ExitCode, exitAnalysisError)
	}
}

func TestRunPanicKeepsStackAndProgress(t *testing.T) {
	t.Parallel()
	r := run(t, testSpec(t, "panic"), "x")
	wantOutcome(t, r, OutcomePanic)
	if !strings.Contains(r.PanicValue, "assignment to entry in nil map") {
		t.Errorf("panic value %q", r.PanicValue)
	}
	if !strings.Contains(r.Stack, "main_test.go") || !strings.Contains(r.Stack, "goroutine") {
		t.Errorf("stack does not point at the analyzer:\n%s", r.Stack)
	}
	if r.Progress.Segment != 7 || r.Progress.Offset != 123 || r.Progress.Stage != "validate" {
		t.Errorf("progress before the crash lost: %+v", r.Progress)
	}
}

func TestRunUnrecoveredGoroutinePanic(t *testing.T) {
	t.Parallel()
	r := run(t, testSpec(t, "goroutine-panic"), "x")
	wantOutcome(t, r, OutcomePanic)
	if r.PanicValue != "worker goroutine exploded" || !strings.Contains(r.Stack, "main_test.go") {
		t.Errorf("panic %q stack:\n%s", r.PanicValue, r.Stack)
	}
	if r.Progress.Segment != 2 {
		t.Errorf("progress %+v", r.Progress)
	}
}

func TestRunMemoryCap(t *testing.T) {
	t.Parallel()
	r := run(t, testSpec(t, "oom"), "x")
	wantOutcome(t, r, OutcomeMemoryCap)
	if !r.HasProgress || r.Progress.Segment < 10 {
		t.Errorf("progress %+v, want the allocation loop's last step", r.Progress)
	}
	// It got close to the cap but not far beyond it.
	// A few MiB of slack: heap pages the runtime had mapped before the
	// baseline was measured are in the baseline but still free.
	if r.Progress.Offset > testMemoryLimit+8<<20 {
		t.Errorf("allocated %d MiB under a %d MiB cap", r.Progress.Offset>>20, testMemoryLimit>>20)
	}
	if r.PeakRSSBytes == 0 {
		t.Errorf("no peak RSS")
	}
}

func TestRunCPUCap(t *testing.T) {
	t.Parallel()
	r := run(t, testSpec(t, "spin"), "x")
	wantOutcome(t, r, OutcomeCPUCap)
	// rusage's user + system time, as the parent reads it after the exit,
	// came out at 877 ms for a 1 s limit on a busy CI machine (a VM; the
	// cause of the gap was not pinned down). The outcome above already says
	// the cap ended the child; well above half the limit says it was not
	// something earlier.
	if r.CPUTime < 750*time.Millisecond {
		t.Errorf("cpu time %s, want about the 1s limit", r.CPUTime)
	}
	if !strings.Contains(r.Stack, "main_test.go") {
		t.Errorf("stack at SIGXCPU should show the spinning analyzer:\n%s", r.Stack)
	}
	if r.Progress.Note != "spinning" {
		t.Errorf("progress %+v", r.Progress)
	}
}

func TestRunWallTimeout(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, "sleep")
	spec.Timeout = 2 * time.Second // includes start-up, slow under -race on a busy machine
	r := run(t, spec, "x")
	wantOutcome(t, r, OutcomeWallTimeout)
	if r.WallTime < 2*time.Second || r.WallTime > 6*time.Second {
		t.Errorf("wall time %s", r.WallTime)
	}
	if r.Signal != "SIGKILL" || r.Progress.Stage != "guard" {
		t.Errorf("signal %q progress %+v", r.Signal, r.Progress)
	}
}

func TestRunOSExitIsCrashed(t *testing.T) {
	t.Parallel()
	r := run(t, testSpec(t, "exit"), "x")
	wantOutcome(t, r, OutcomeCrashed)
	if r.Progress.Segment != 4 {
		t.Errorf("progress %+v", r.Progress)
	}
}

func TestRunEnvironmentIsCleared(t *testing.T) {
	t.Setenv("EDIHUB_TEST_SECRET", "nats-creds-hunter2")
	r := run(t, testSpec(t, "env"), "x")
	wantOutcome(t, r, OutcomeParsedFine)
	env := r.Result.Details["env"]
	if strings.Contains(env, "hunter2") {
		t.Fatalf("secret leaked into the child:\n%s", env)
	}
	for _, kv := range strings.Split(env, "\n") {
		k, _, _ := strings.Cut(kv, "=")
		if k != childModeVar && k != "GORACE" && !strings.HasPrefix(k, "EDIHUB_SANDBOX_") {
			t.Errorf("unexpected variable in the child: %q", kv)
		}
	}
}

func TestRunLimitsAreInForce(t *testing.T) {
	t.Parallel()
	r := run(t, testSpec(t, "limits"), "payload-bytes")
	wantOutcome(t, r, OutcomeParsedFine)
	d := r.Result.Details
	if d["payload"] != "payload-bytes" {
		t.Errorf("payload %q", d["payload"])
	}
	if d["cpu"] != "1/2" {
		t.Errorf("RLIMIT_CPU %s, want 1/2", d["cpu"])
	}
	l := r.Limits
	if want := strconv.FormatInt(l.DataBytes, 10); !strings.HasPrefix(d["data"], want+"/") {
		t.Errorf("RLIMIT_DATA %s, report says %s", d["data"], want)
	}
	if extra := l.DataBytes - l.BaselineDataBytes; extra != testMemoryLimit {
		t.Errorf("data limit is baseline + %d, want + %d", extra, testMemoryLimit)
	}
	// Without CAP_SYS_RESOURCE a root parent cannot prlimit a child that
	// runs as nobody, only read its limits.
	if l.AddressSpaceBytes <= l.BaselineVMBytes || (l.AppliedBy != "child+parent" && l.AppliedBy != "child, verified by parent") {
		t.Errorf("limits %+v", l)
	}
}

// enforceLimits must cap a child that never limited itself.
func TestEnforceLimitsOnUncooperativeChild(t *testing.T) {
	t.Parallel()
	cmd := testCommand(t, "no-childmain")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	time.Sleep(200 * time.Millisecond) // let the runtime finish its start-up reservations
	l, err := enforceLimits(cmd.Process.Pid, 32<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	if l.CPUSeconds != 2 || l.DataBytes != l.BaselineDataBytes+32<<20 {
		t.Errorf("limits %+v", l)
	}
	// Applying again with looser values must not raise anything.
	l2, err := enforceLimits(cmd.Process.Pid, 1<<30, 100)
	if err != nil {
		t.Fatal(err)
	}
	if l2.CPUSeconds != 2 || l2.DataBytes != l.DataBytes {
		t.Errorf("limits were raised: %+v", l2)
	}
}

func TestRunHandshakeFailureIsInfra(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, "no-childmain")
	spec.Timeout = 500 * time.Millisecond
	_, err := Run(context.Background(), spec, []byte("x"))
	var ie *InfraError
	if !errors.As(err, &ie) || ie.Op != "handshake" {
		t.Fatalf("error %v, want a handshake InfraError", err)
	}
}

func TestRunMissingBinaryIsInfra(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, "fine")
	spec.Path = filepath.Join(t.TempDir(), "no-such-edihub")
	_, err := Run(context.Background(), spec, nil)
	var ie *InfraError
	if !errors.As(err, &ie) || ie.Op != "start" || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v, want a start InfraError wrapping ErrNotExist", err)
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := Run(ctx, testSpec(t, "sleep"), []byte("x"))
	wantErrorIs(t, err, context.Canceled)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancellation took %s", d)
	}
}

func TestRunInvalidSpec(t *testing.T) {
	t.Parallel()
	for _, spec := range []*Spec{
		{},
		{Path: "/bin/true", MemoryLimit: 1 << 20},
		{Path: "/bin/true", Env: []string{envMemory + "=999999999999"}},
		{Path: "/bin/true", Env: []string{"NOEQUALS"}},
	} {
		if _, err := Run(context.Background(), spec, nil); err == nil || !strings.Contains(err.Error(), "invalid spec") {
			t.Errorf("%+v: error %v", spec, err)
		}
	}
}

// The parent must not buffer what a misbehaving child sends: 20 MiB of
// stderr and a 3 MiB record must leave its heap where it was, and so must a
// child that dies of memory exhaustion.
func TestRunParentMemoryStaysFlat(t *testing.T) {
	measure := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	// Warm up once so that one-time allocations (exec, json) are not counted.
	run(t, testSpec(t, "fine"), "x")
	before := measure()

	flood := testSpec(t, "flood")
	flood.CPULimit = 10 * time.Second // JSON-encoding 3 MiB is slow under -race
	r := run(t, flood, "x")
	wantOutcome(t, r, OutcomeParsedFine)
	if r.StderrBytes < 20<<20 || len(r.Stderr) > DefaultMaxStderrBytes+100 {
		t.Errorf("stderr: %d bytes written, %d kept", r.StderrBytes, len(r.Stderr))
	}
	if r.Progress.Segment != 2 || len(r.Notes) == 0 {
		t.Errorf("oversized record not skipped: progress %+v notes %q", r.Progress, r.Notes)
	}
	r = run(t, testSpec(t, "oom"), "x")
	wantOutcome(t, r, OutcomeMemoryCap)
	runtime.KeepAlive(r)

	after := measure()
	const bound = 4 << 20
	if after > before && after-before > bound {
		t.Errorf("parent heap grew by %d KiB (before %d KiB, after %d KiB), bound %d KiB",
			(after-before)>>10, before>>10, after>>10, bound>>10)
	}
	t.Logf("parent HeapInuse before %d KiB, after %d KiB", before>>10, after>>10)
}

func BenchmarkRunParsedFine(b *testing.B) {
	spec := testSpec(b, "fine")
	payload := []byte("UNA:+.? 'UNB+UNOC:3'")
	for b.Loop() {
		r, err := Run(context.Background(), spec, payload)
		if err != nil {
			b.Fatal(err)
		}
		if r.Outcome != OutcomeParsedFine {
			b.Fatalf("outcome %s: %s", r.Outcome, r.Stderr)
		}
	}
}

package sandbox

import (
	"fmt"
	"time"
)

// Outcome is the parent's verdict on one sandboxed run. The values are
// stable strings because they end up in forensic reports, alerts and tickets.
type Outcome string

const (
	// OutcomeReproducedError: the analysis returned an error, so the failure
	// reproduces deterministically outside the worker.
	OutcomeReproducedError Outcome = "reproduced-error"
	// OutcomePanic: the analysis panicked (recovered in the child, or an
	// unrecovered panic in a goroutine it started); Stack holds the trace.
	OutcomePanic Outcome = "panic"
	// OutcomeMemoryCap: the child ran into its memory limit.
	OutcomeMemoryCap Outcome = "memory-cap"
	// OutcomeCPUCap: the child used up its CPU-time limit (endless loop,
	// pathological backtracking).
	OutcomeCPUCap Outcome = "cpu-cap"
	// OutcomeWallTimeout: the child was still alive at Spec.Timeout and was
	// killed; typically blocked rather than busy (a busy child hits cpu-cap).
	OutcomeWallTimeout Outcome = "wall-timeout"
	// OutcomeKilledBySignal: the child died from a signal nobody in the
	// sandbox sent for a known reason (kernel OOM killer, an operator, ...).
	OutcomeKilledBySignal Outcome = "killed-by-signal"
	// OutcomeCrashed: the child exited without a final report and without a
	// recognisable panic or memory error: os.Exit inside the analysis, a
	// runtime fatal error such as "concurrent map writes" or a stack overflow.
	OutcomeCrashed Outcome = "crashed"
	// OutcomeParsedFine: the analysis succeeded in isolation. The original
	// failure was environmental (resources, timing, dependencies) or a
	// schema/version mismatch between the worker and this binary.
	OutcomeParsedFine Outcome = "parsed-fine"
)

// Progress is how far the analysis got. The analysis function reports it
// through the callback passed to it; the child forwards every call to the
// parent immediately, so the last value survives a crash or a kill.
type Progress struct {
	Segment int    `json:"segment"`         // 1-based number of the segment being processed
	Offset  int64  `json:"offset"`          // byte offset into the payload
	Stage   string `json:"stage,omitempty"` // e.g. "guard", "parse", "validate"
	Note    string `json:"note,omitempty"`  // free text, e.g. the segment tag
}

// Result is the analysis function's free-form summary of a successful run.
type Result struct {
	Summary string            `json:"summary,omitempty"` // e.g. "3 messages, 412 segments"
	Details map[string]string `json:"details,omitempty"`
}

// Limits are the resource limits that were in force in the child, as
// verified before the payload was released to it.
type Limits struct {
	// MemoryBytes is Spec.MemoryLimit: what the analysis may use on top of
	// the start-up footprint.
	MemoryBytes int64 `json:"memory_bytes"`
	// DataBytes is RLIMIT_DATA: the child's start-up data footprint plus
	// Spec.MemoryLimit. See doc.go for why DATA and not AS is the real cap.
	DataBytes int64 `json:"data_bytes"`
	// AddressSpaceBytes is RLIMIT_AS, a backstop: start-up size plus four
	// times Spec.MemoryLimit.
	AddressSpaceBytes int64 `json:"address_space_bytes"`
	// CPUSeconds is the RLIMIT_CPU soft limit (SIGXCPU); the hard limit
	// (SIGKILL) is one second later.
	CPUSeconds int64 `json:"cpu_seconds"`
	// BaselineDataBytes and BaselineVMBytes are what the child used before
	// it saw the payload (Go runtime, binary, race detector shadow, ...).
	BaselineDataBytes int64 `json:"baseline_data_bytes"`
	BaselineVMBytes   int64 `json:"baseline_vm_bytes"`
	// AppliedBy says who set the limits: "child+parent" normally (the
	// parent re-applied them with prlimit(2)); "child, verified by parent"
	// if prlimit was denied (a child running as another user needs
	// CAP_SYS_RESOURCE) but /proc/<pid>/limits showed them in force; "child"
	// if the parent could not check at all.
	AppliedBy string `json:"applied_by"`
}

// Report is the forensic record of one sandboxed run. It is plain data so the
// hub can store it as JSON next to the quarantined message.
type Report struct {
	Outcome Outcome `json:"outcome"`
	Summary string  `json:"summary"` // one line for humans, e.g. in an alert

	// Error, ErrorClass and Cause describe a returned error. ErrorClass comes
	// from an ErrorClass() string method anywhere in the error chain, else
	// the Go type name; Cause from an ErrorCause() string method.
	Error      string `json:"error,omitempty"`
	ErrorClass string `json:"error_class,omitempty"`
	Cause      string `json:"cause,omitempty"`

	// PanicValue and Stack describe a panic or a runtime fatal error. For
	// cpu-cap Stack holds all goroutines at the moment of SIGXCPU, which
	// shows where the analysis was spinning.
	PanicValue string `json:"panic_value,omitempty"`
	Stack      string `json:"stack,omitempty"`

	Progress    Progress `json:"progress"`
	HasProgress bool     `json:"has_progress"` // false: the analysis never reported progress
	Result      *Result  `json:"result,omitempty"`

	StartedAt    time.Time     `json:"started_at"`
	WallTime     time.Duration `json:"wall_time_ns"`
	CPUTime      time.Duration `json:"cpu_time_ns"` // user + system, from rusage
	PeakRSSBytes int64         `json:"peak_rss_bytes"`
	ExitCode     int           `json:"exit_code"` // -1 when killed by a signal
	Signal       string        `json:"signal,omitempty"`
	Limits       Limits        `json:"limits"`
	Isolation    Isolation     `json:"isolation"` // which isolation layers were in force
	PayloadBytes int           `json:"payload_bytes"`

	// Stderr is the head and tail of the child's stderr (bounded, see
	// Spec.MaxStderrBytes); StderrBytes is how much it wrote in total.
	Stderr      string `json:"stderr,omitempty"`
	StderrBytes int64  `json:"stderr_bytes"`

	// Notes are observations that do not change the outcome but matter to
	// whoever reads the report (a truncated record, an ignored write error).
	Notes []string `json:"notes,omitempty"`
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// summarize fills Summary from the other fields.
func (r *Report) summarize() {
	where := ""
	if r.HasProgress {
		where = fmt.Sprintf(" at segment %d (offset %d", r.Progress.Segment, r.Progress.Offset)
		if r.Progress.Stage != "" {
			where += ", stage " + r.Progress.Stage
		}
		where += ")"
	}
	switch r.Outcome {
	case OutcomeReproducedError:
		r.Summary = fmt.Sprintf("error reproduced%s: %s", where, r.Error)
	case OutcomePanic:
		r.Summary = fmt.Sprintf("panic%s: %s", where, r.PanicValue)
	case OutcomeMemoryCap:
		r.Summary = fmt.Sprintf("memory cap of %d bytes hit%s", r.Limits.MemoryBytes, where)
	case OutcomeCPUCap:
		r.Summary = fmt.Sprintf("CPU cap of %ds hit%s", r.Limits.CPUSeconds, where)
	case OutcomeWallTimeout:
		r.Summary = fmt.Sprintf("still running after %s, killed%s", r.WallTime.Round(time.Millisecond), where)
	case OutcomeKilledBySignal:
		r.Summary = fmt.Sprintf("killed by %s%s", r.Signal, where)
	case OutcomeCrashed:
		r.Summary = fmt.Sprintf("crashed with exit code %d%s", r.ExitCode, where)
		if r.PanicValue != "" {
			r.Summary += ": " + r.PanicValue
		}
	case OutcomeParsedFine:
		r.Summary = "parsed fine in isolation: environmental cause or schema/version mismatch"
		if r.Result != nil && r.Result.Summary != "" {
			r.Summary += " (" + r.Result.Summary + ")"
		}
	}
}

package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The child talks to the parent in JSON lines on the report pipe (fd 3). A
// pipe, not stdout: the analysis may print anything on stdout/stderr, and
// the parent reads the pipe while the child runs, so the last record sent
// before a crash or a kill is never lost in a buffer.
//
//	ready      after the child applied its own limits, before it reads stdin
//	progress   every call of the progress callback
//	result     the analysis returned nil          (final)
//	error      the analysis returned an error     (final)
//	panic      the analysis panicked              (final)
//	cpu-limit  SIGXCPU arrived; stack of all goroutines (final)
const (
	evReady    = "ready"
	evProgress = "progress"
	evResult   = "result"
	evError    = "error"
	evPanic    = "panic"
	evCPULimit = "cpu-limit"
)

// Exit codes of ChildMain. They only back up the final record: the record is
// what the parent classifies on. 1 and 2 are avoided because the Go runtime
// uses 2 for fatal errors and unrecovered panics.
const (
	exitOK            = 0
	exitAnalysisError = 10
	exitPanic         = 11
	exitCPULimit      = 12
	exitProtocol      = 13
)

// ExitMeaning says in plain words what a child's exit code (and signal)
// means, for reports read by people ("exit 12" alone says nothing).
func ExitMeaning(code int, signal string) string {
	switch {
	case signal != "":
		return "killed by signal " + signal
	case code == exitOK:
		return "exited normally"
	case code == exitAnalysisError:
		return "the analysis returned an error"
	case code == exitPanic:
		return "the analysis panicked"
	case code == exitCPULimit:
		return "stopped itself at the CPU cap"
	case code == exitProtocol:
		return "could not talk to the parent (protocol error)"
	case code == 2:
		return "the Go runtime gave up (fatal error or unrecovered panic)"
	}
	return "an unexpected exit code"
}

// Bounds the child applies before sending, so the records fit in the
// parent's MaxReportBytes with the default settings.
const (
	maxStackBytes = 64 << 10
	maxErrorBytes = 16 << 10
)

type event struct {
	T string `json:"t"`

	Progress *Progress `json:"p,omitempty"`
	Result   *Result   `json:"result,omitempty"`

	Error      string `json:"error,omitempty"`
	ErrorClass string `json:"class,omitempty"`
	Cause      string `json:"cause,omitempty"`
	PanicValue string `json:"panic,omitempty"`
	Stack      string `json:"stack,omitempty"`

	// ready: what the child measured and set.
	Limits    *Limits `json:"limits,omitempty"`
	LimitsErr string  `json:"limits_err,omitempty"`
	// ready: the isolation the child put in place (verified by the parent).
	Isolation *Isolation `json:"isolation,omitempty"`

	// Final records: the child's own peak RSS (VmHWM), which unlike
	// rusage's ru_maxrss is not polluted by the parent (see run.go).
	PeakRSSBytes int64 `json:"peak_rss,omitempty"`
}

func (e *event) final() bool {
	switch e.T {
	case evResult, evError, evPanic, evCPULimit:
		return true
	}
	return false
}

// eventWriter serialises records from the analysis goroutines and the
// SIGXCPU handler onto the pipe. Writes are unbuffered on purpose.
type eventWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error // first write error; later writes are dropped
}

func (w *eventWriter) send(e *event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("sandbox: encode %s record: %w", e.T, err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("sandbox: write %s record: %w", e.T, err)
	}
	return w.err
}

// errRecordTooLong is returned (and the record skipped) when a line exceeds
// the limit; reading continues with the next line.
var errRecordTooLong = errors.New("record exceeds MaxReportBytes")

// readEvents calls fn for every record on r until EOF or a read error.
// Memory is bounded by max regardless of what the child writes.
func readEvents(r io.Reader, max int, fn func(*event), bad func(error)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping {
			if len(line)+len(chunk) > max {
				bad(errRecordTooLong)
				skipping, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return err
		}
		if !skipping && len(line) > 0 {
			var e event
			if jerr := json.Unmarshal(line, &e); jerr != nil {
				bad(fmt.Errorf("malformed record: %w", jerr))
			} else {
				fn(&e)
			}
		}
		skipping, line = false, line[:0]
		if err != nil { // EOF
			return nil
		}
	}
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:max] + fmt.Sprintf("\n... [%d bytes truncated]", len(s)-max)
}

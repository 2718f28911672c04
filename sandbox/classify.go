package sandbox

import (
	"fmt"
	"strings"
	"time"
)

// observed is everything the parent learnt about one child run; classify
// turns it into the outcome. Kept free of processes so it can be tested
// with table cases.
type observed struct {
	final      *event    // last final record, nil if none arrived
	progress   *Progress // last progress record
	exitCode   int       // -1 if signalled
	signal     string    // "SIGKILL", ... or ""
	cpu        time.Duration
	wallKilled bool   // the parent killed the child at Spec.Timeout
	stderr     string // bounded head and tail
	crash      string // the crash section of stderr, see headTail
	peakRSS    int64
	lastData   int64         // last sampled VmData, see nearDataLimit
	dataLimit  int64         // RLIMIT_DATA in force
	memLimit   int64         // Spec.MemoryLimit
	cpuLimit   time.Duration // the RLIMIT_CPU soft limit in force
}

// cpuSlack absorbs rusage rounding when deciding whether a SIGKILL came
// from the hard RLIMIT_CPU (which is one second above the soft limit).
const cpuSlack = 100 * time.Millisecond

// memoryMarkers are what a Go child prints or returns when an allocation
// fails under RLIMIT_DATA/RLIMIT_AS: the runtime's fatal "out of memory"
// (heap growth), errno 12 from thread creation or mmap, and ENOMEM surfaced
// as an error by code that maps memory itself. Lower case, matched on
// lower-cased text.
var memoryMarkers = []string{
	"fatal error: runtime: out of memory",
	"runtime: out of memory",
	"cannot allocate memory",
	"errno=12",
	"errno: 12", // the race detector: "ThreadSanitizer failed to allocate ... (errno: 12)"
	// A cgo (or race) build starts threads with pthread_create, whose stack
	// mmap counts against RLIMIT_DATA; glibc reports that failure as EAGAIN.
	// EAGAIN could also be RLIMIT_NPROC, which the sandbox does not set.
	"pthread_create failed",
	// A race build whose heap reservation fails under RLIMIT_AS.
	"too many address space collisions",
	"out of memory",
}

func mentionsMemory(s string) bool {
	s = strings.ToLower(s)
	for _, m := range memoryMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// classify fills r.Outcome and the fields that go with it. The order of the
// checks matters: an explicit record from the child beats inference from
// exit status, and the cause of a kill beats what the child was doing.
func classify(o *observed, r *Report) {
	if o.progress != nil {
		r.Progress, r.HasProgress = *o.progress, true
	}
	f := o.final
	if f != nil && f.Result != nil {
		r.Result = f.Result
	}
	cpuCapped := o.cpu+cpuSlack >= o.cpuLimit

	switch {
	case f != nil && f.T == evCPULimit:
		r.Outcome, r.Stack = OutcomeCPUCap, f.Stack

	case o.wallKilled && !cpuCapped:
		r.Outcome = OutcomeWallTimeout

	case o.signal == "SIGXCPU" || (o.signal == "SIGKILL" && cpuCapped):
		// The SIGXCPU handler did not get to run (or the child blocked it);
		// the kernel killed it at the hard limit.
		r.Outcome = OutcomeCPUCap

	case f != nil && (f.T == evError || f.T == evPanic) && mentionsMemory(f.Error+" "+f.PanicValue):
		r.Outcome = OutcomeMemoryCap
		r.Error, r.ErrorClass, r.Cause = f.Error, f.ErrorClass, f.Cause
		r.PanicValue, r.Stack = f.PanicValue, f.Stack

	case f != nil && f.T == evError:
		r.Outcome = OutcomeReproducedError
		r.Error, r.ErrorClass, r.Cause = f.Error, f.ErrorClass, f.Cause

	case f != nil && f.T == evPanic:
		r.Outcome, r.PanicValue, r.Stack, r.ErrorClass = OutcomePanic, f.PanicValue, f.Stack, f.ErrorClass

	case f != nil && f.T == evResult && o.exitCode == exitOK:
		r.Outcome = OutcomeParsedFine

	case o.signal == "":
		// No usable final record: the process died on its own. Look at what
		// the Go runtime printed.
		classifyStderr(o, r)

	case o.signal == "SIGKILL" && o.memLimit > 0 && o.peakRSS >= o.memLimit*9/10:
		// Not us, not the CPU limit, and close to the memory cap: the kernel
		// OOM killer or a cgroup limit.
		r.Outcome = OutcomeMemoryCap
		r.note("SIGKILL with peak RSS %d near the memory cap; assumed OOM killer", o.peakRSS)

	default:
		r.Outcome = OutcomeKilledBySignal
	}
	if f != nil && f.T == evResult && r.Outcome != OutcomeParsedFine {
		r.note("the analysis returned a result, but the child then ended with exit code %d / signal %q", o.exitCode, o.signal)
	}
}

// nearDataLimit: the last sample of VmData was within a quarter of the
// memory limit of RLIMIT_DATA.
func (o *observed) nearDataLimit() bool {
	return o.dataLimit > 0 && o.lastData > 0 && o.lastData >= o.dataLimit-o.memLimit/4
}

// classifyStderr handles a child that exited without a final record.
func classifyStderr(o *observed, r *Report) {
	text := o.crash
	if text == "" {
		text = o.stderr
	}
	if mentionsMemory(o.crash) || mentionsMemory(o.stderr) {
		r.Outcome = OutcomeMemoryCap
		if v, stack, ok := findCrash(text, "fatal error: "); ok {
			r.PanicValue, r.Stack = "fatal error: "+v, stack
		}
		return
	}
	if v, stack, ok := findCrash(text, "panic: "); ok {
		// An unrecovered panic in a goroutine the analysis started.
		r.Outcome, r.PanicValue, r.Stack = OutcomePanic, v, stack
		return
	}
	r.Outcome = OutcomeCrashed
	if o.nearDataLimit() {
		// Native code (cgo, the race detector's runtime) that does not check
		// for a failed allocation dies with SIGSEGV or SIGABRT instead of a
		// message. The parent's last memory sample tells it how close the
		// child was to the cap.
		r.Outcome = OutcomeMemoryCap
		r.note("no memory error in the output, but the child's data segment was at %d of %d bytes %s before it died", o.lastData, o.dataLimit, sampleEvery)
	}
	if v, stack, ok := findCrash(text, "fatal error: "); ok {
		r.PanicValue, r.Stack = "fatal error: "+v, stack
	} else if v, stack, ok := findCrash(text, "SIG"); ok {
		r.PanicValue, r.Stack = "SIG"+v, stack // "SIGSEGV: segmentation violation"
	} else if o.exitCode == exitOK {
		r.note("exit code 0 without a final record: the analysis probably called os.Exit")
	}
}

// findCrash finds the first line starting with prefix in a Go crash dump and
// returns the rest of that line and the dump from there on.
func findCrash(stderr, prefix string) (value, stack string, ok bool) {
	i := 0
	for {
		j := strings.Index(stderr[i:], prefix)
		if j < 0 {
			return "", "", false
		}
		j += i
		if j == 0 || stderr[j-1] == '\n' {
			line, _, _ := strings.Cut(stderr[j+len(prefix):], "\n")
			return strings.TrimSpace(line), stderr[j:], true
		}
		i = j + len(prefix)
	}
}

// headTail keeps the first and the last half of what is written to it: a Go
// crash dump starts with the reason ("fatal error: runtime: out of memory")
// and can then run to megabytes of goroutine stacks. Because the analysis
// may log a lot before it crashes, it also keeps a separate crash section:
// up to max bytes from the first line that starts like a runtime crash
// message, wherever that falls in the stream.
type headTail struct {
	max   int
	head  []byte
	tail  []byte // ring buffer once full
	pos   int    // next write position in tail when full
	total int64
	crash []byte // from the first crash marker on, bounded by max
	found bool
	carry []byte // end of the previous write, to match markers across writes
	fake  bool   // carry is the synthetic "\n" that lets a marker match at offset 0
}

// crashMarkers start the lines the Go runtime writes when a process dies.
var crashMarkers = []string{"\nfatal error: ", "\npanic: ", "\nruntime: ", "\nSIG", "\n==" /* sanitizers */}

const crashContext = 512 // bytes kept before the marker

func newHeadTail(max int) *headTail { return &headTail{max: max, carry: []byte("\n"), fake: true} }

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	h.scanCrash(p)
	if room := h.max/2 - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	tailMax := h.max - h.max/2
	for len(p) > 0 && tailMax > 0 {
		if len(h.tail) < tailMax {
			k := min(tailMax-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(h.tail[h.pos:], p)
		h.pos = (h.pos + k) % tailMax
		p = p[k:]
	}
	return n, nil
}

func (h *headTail) scanCrash(p []byte) {
	if h.found {
		if room := h.max - len(h.crash); room > 0 {
			h.crash = append(h.crash, p[:min(room, len(p))]...)
		}
		return
	}
	data := append(append([]byte(nil), h.carry...), p...)
	at := -1
	for _, m := range crashMarkers {
		if i := strings.Index(string(data), m); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at >= 0 {
		h.found = true
		lo := 0
		if h.fake {
			lo = 1
		}
		from := max(lo, at+1-min(crashContext, h.max/4))
		h.crash = append([]byte(nil), data[from:min(len(data), from+h.max)]...)
		h.carry = nil
		return
	}
	h.carry = append(h.carry[:0], data[max(0, len(data)-crashContext):]...)
	h.fake = false
}

// String is the bounded stderr for the report.
func (h *headTail) String() string {
	tail := append(append([]byte(nil), h.tail[h.pos:]...), h.tail[:h.pos]...)
	if kept := int64(len(h.head) + len(tail)); kept < h.total {
		return fmt.Sprintf("%s\n... [%d bytes elided] ...\n%s", h.head, h.total-kept, tail)
	}
	return string(h.head) + string(tail)
}

// Crash is the crash section ("" if there was no crash marker).
func (h *headTail) Crash() string { return string(h.crash) }

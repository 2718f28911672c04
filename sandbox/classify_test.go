package sandbox

import (
	"strings"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	base := func() *observed {
		return &observed{memLimit: 256 << 20, cpuLimit: 30 * time.Second, dataLimit: 300 << 20}
	}
	cases := []struct {
		name string
		mod  func(o *observed)
		want Outcome
	}{
		{"result", func(o *observed) { o.final = &event{T: evResult, Result: &Result{}} }, OutcomeParsedFine},
		{"error", func(o *observed) { o.final = &event{T: evError, Error: "bad UNH"}; o.exitCode = exitAnalysisError }, OutcomeReproducedError},
		{"error is ENOMEM", func(o *observed) {
			o.final = &event{T: evError, Error: "mmap: cannot allocate memory"}
		}, OutcomeMemoryCap},
		{"panic", func(o *observed) { o.final = &event{T: evPanic, PanicValue: "index out of range"} }, OutcomePanic},
		{"cpu record", func(o *observed) { o.final = &event{T: evCPULimit, Stack: "goroutine 1"} }, OutcomeCPUCap},
		{"hard cpu kill", func(o *observed) { o.signal, o.cpu, o.exitCode = "SIGKILL", 31*time.Second, -1 }, OutcomeCPUCap},
		{"sigxcpu", func(o *observed) { o.signal, o.exitCode = "SIGXCPU", -1 }, OutcomeCPUCap},
		{"wall", func(o *observed) { o.wallKilled, o.signal, o.exitCode = true, "SIGKILL", -1 }, OutcomeWallTimeout},
		{"wall but busy", func(o *observed) { o.wallKilled, o.signal, o.cpu = true, "SIGKILL", 30*time.Second }, OutcomeCPUCap},
		{"oom killer", func(o *observed) { o.signal, o.peakRSS, o.exitCode = "SIGKILL", 250<<20, -1 }, OutcomeMemoryCap},
		{"foreign kill", func(o *observed) { o.signal, o.peakRSS, o.exitCode = "SIGKILL", 10<<20, -1 }, OutcomeKilledBySignal},
		{"sigterm", func(o *observed) { o.signal, o.exitCode = "SIGTERM", -1 }, OutcomeKilledBySignal},
		{"go oom", func(o *observed) {
			o.exitCode, o.crash = 2, "fatal error: runtime: out of memory\n\nruntime stack:\n"
		}, OutcomeMemoryCap},
		{"thread oom", func(o *observed) {
			o.exitCode, o.stderr = 2, "runtime: failed to create new OS thread (have 5 already; errno=12)\nfatal error: newosproc\n"
		}, OutcomeMemoryCap},
		{"unrecovered panic", func(o *observed) {
			o.exitCode, o.crash = 2, "log line\npanic: boom\n\ngoroutine 7 [running]:\n"
		}, OutcomePanic},
		{"concurrent map writes", func(o *observed) {
			o.exitCode, o.crash = 2, "fatal error: concurrent map writes\n\ngoroutine 1:\n"
		}, OutcomeCrashed},
		{"segv near the cap", func(o *observed) {
			o.exitCode, o.crash, o.lastData = 2, "SIGSEGV: segmentation violation\nPC=0x0\n", 290<<20
		}, OutcomeMemoryCap},
		{"segv far from the cap", func(o *observed) {
			o.exitCode, o.crash, o.lastData = 2, "SIGSEGV: segmentation violation\nPC=0x0\n", 60<<20
		}, OutcomeCrashed},
		{"os.Exit", func(o *observed) {}, OutcomeCrashed},
		{"result then crash", func(o *observed) {
			o.final, o.exitCode, o.crash = &event{T: evResult, Result: &Result{}}, 2, "panic: late\n"
		}, OutcomePanic},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base()
			c.mod(o)
			var r Report
			classify(o, &r)
			r.summarize()
			if r.Outcome != c.want {
				t.Errorf("outcome %q, want %q (notes %q)", r.Outcome, c.want, r.Notes)
			}
			if r.Summary == "" {
				t.Errorf("no summary")
			}
		})
	}
}

func TestClassifyKeepsCrashDetails(t *testing.T) {
	o := &observed{exitCode: 2, crash: "panic: nil deref [recovered]\n\ngoroutine 9 [running]:\nmain.f()\n", progress: &Progress{Segment: 12}}
	var r Report
	classify(o, &r)
	if r.PanicValue != "nil deref [recovered]" || !strings.HasPrefix(r.Stack, "panic: nil deref") || r.Progress.Segment != 12 || !r.HasProgress {
		t.Errorf("%+v", r)
	}
}

func TestFindCrashOnlyAtLineStart(t *testing.T) {
	if _, _, ok := findCrash("a log about panic: nothing\n", "panic: "); ok {
		t.Errorf("matched mid-line")
	}
	v, stack, ok := findCrash("x panic: no\npanic: yes\nstack", "panic: ")
	if !ok || v != "yes" || stack != "panic: yes\nstack" {
		t.Errorf("%q %q %v", v, stack, ok)
	}
}

func TestHeadTail(t *testing.T) {
	h := newHeadTail(100)
	h.Write([]byte(strings.Repeat("a", 60)))
	for range 100 {
		h.Write([]byte(strings.Repeat("b", 7)))
	}
	h.Write([]byte("\nfatal error: runtime: out of memory\n"))
	for range 100 {
		h.Write([]byte(strings.Repeat("c", 13)))
	}
	s := h.String()
	if !strings.HasPrefix(s, strings.Repeat("a", 50)+"\n... [") || !strings.HasSuffix(s, strings.Repeat("c", 50)) {
		t.Errorf("head/tail wrong: %q", s)
	}
	if h.total != 60+700+37+1300 {
		t.Errorf("total %d", h.total)
	}
	// The crash line fell into the elided middle but is kept separately.
	if !strings.Contains(h.Crash(), "fatal error: runtime: out of memory") || len(h.Crash()) > 100 {
		t.Errorf("crash section %q", h.Crash())
	}
}

func TestHeadTailMarkerAcrossWrites(t *testing.T) {
	h := newHeadTail(1 << 10)
	h.Write([]byte("noise\nfatal er"))
	h.Write([]byte("ror: concurrent map writes\n"))
	if !strings.Contains(h.Crash(), "fatal error: concurrent map writes") {
		t.Errorf("crash section %q", h.Crash())
	}
	h2 := newHeadTail(1 << 10)
	h2.Write([]byte("panic: at the very start\n"))
	if !strings.HasPrefix(h2.Crash(), "panic: at the very start") {
		t.Errorf("crash section %q", h2.Crash())
	}
}

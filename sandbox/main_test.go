package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tests re-run this test binary as the child, as os/exec's own tests
// do: TestMain sees childModeVar and becomes `edihub sandbox exec` with the
// analyzer named by the mode.
const childModeVar = "EDIHUB_SANDBOX_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeVar); mode != "" {
		if mode == "no-childmain" {
			// A binary that does not speak the protocol (wrong subcommand,
			// stale build): it just idles.
			time.Sleep(30 * time.Second)
			os.Exit(0)
		}
		if main, ok := testChildMains[mode]; ok {
			os.Exit(main())
		}
		a, ok := testAnalyzers[mode]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown test child mode %q\n", mode)
			os.Exit(99)
		}
		os.Exit(ChildMain(a))
	}
	os.Exit(m.Run())
}

// schemaError stands in for a hub error that knows its class and cause.
type schemaError struct{ seg int }

func (e *schemaError) Error() string      { return fmt.Sprintf("segment %d: UNH missing", e.seg) }
func (e *schemaError) ErrorClass() string { return "permanent" }
func (e *schemaError) ErrorCause() string { return "schema" }

var sink [][]byte

// testChildMains are child modes that replace ChildMain itself, to play a
// misbehaving child.
var testChildMains = map[string]func() int{}

var testAnalyzers = map[string]Analyzer{
	"fine": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		for i := 1; i <= 3; i++ {
			progress(Progress{Segment: i, Offset: int64(i * 10), Stage: "parse"})
		}
		return Result{Summary: "1 message", Details: map[string]string{"bytes": strconv.Itoa(len(payload))}}, nil
	},
	"error": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		progress(Progress{Segment: 3, Offset: 42, Stage: "parse", Note: "UNH"})
		return Result{}, fmt.Errorf("parse interchange: %w", &schemaError{seg: 3})
	},
	"panic": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		progress(Progress{Segment: 7, Offset: 123, Stage: "validate"})
		var m map[string]int
		m["boom"]++ // assignment to entry in nil map
		return Result{}, nil
	},
	"goroutine-panic": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		progress(Progress{Segment: 2, Offset: 9})
		go func() { panic("worker goroutine exploded") }()
		time.Sleep(10 * time.Second)
		return Result{}, nil
	},
	"oom": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		for i := 1; ; i++ {
			b := make([]byte, 1<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1 // touch, so it is resident
			}
			sink = append(sink, b)
			progress(Progress{Segment: i, Offset: int64(i) << 20, Stage: "parse"})
		}
	},
	"spin": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		progress(Progress{Segment: 5, Offset: 50, Stage: "parse", Note: "spinning"})
		n := 0
		for {
			n++
		}
	},
	"sleep": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		progress(Progress{Segment: 1, Stage: "guard"})
		time.Sleep(time.Hour)
		return Result{}, nil
	},
	"exit": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		progress(Progress{Segment: 4})
		os.Exit(0)
		return Result{}, nil
	},
	"env": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		return Result{Details: map[string]string{"env": strings.Join(os.Environ(), "\n")}}, nil
	},
	"limits": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		d := map[string]string{}
		for name, res := range map[string]int{"cpu": unix.RLIMIT_CPU, "data": unix.RLIMIT_DATA, "as": unix.RLIMIT_AS} {
			var l unix.Rlimit
			if err := unix.Getrlimit(res, &l); err != nil {
				return Result{}, err
			}
			d[name] = strconv.FormatUint(l.Cur, 10) + "/" + strconv.FormatUint(l.Max, 10)
		}
		d["payload"] = string(payload)
		return Result{Details: d}, nil
	},
	"flood": func(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
		line := strings.Repeat("x", 1023) + "\n"
		for range 20 << 10 { // 20 MiB of stderr
			os.Stderr.WriteString(line)
		}
		progress(Progress{Segment: 1, Note: strings.Repeat("n", 3<<20)}) // exceeds MaxReportBytes
		progress(Progress{Segment: 2, Note: "after the oversized record"})
		return Result{Summary: "flooded"}, nil
	},
}

func testBinary(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// testMemoryLimit is the children's cap. Under -race the child is a race
// binary too, and ThreadSanitizer keeps allocating after start-up.
var testMemoryLimit int64 = 64 << 20

func init() {
	if raceEnabled {
		testMemoryLimit = 160 << 20
	}
}

func testSpec(t testing.TB, mode string) *Spec {
	return &Spec{
		Path: testBinary(t),
		Args: []string{"-test.run=^$"},
		// atexit_sleep_ms: a race binary otherwise sleeps 1s before exiting.
		Env:         []string{childModeVar + "=" + mode, "GORACE=atexit_sleep_ms=0"},
		MemoryLimit: testMemoryLimit,
		CPULimit:    time.Second,
		Timeout:     15 * time.Second,
	}
}

func run(t *testing.T, spec *Spec, payload string) *Report {
	t.Helper()
	r, err := Run(context.Background(), spec, []byte(payload))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("%s | cpu %s wall %s peak %d MiB exit %d %s | limits %+v | isolation %+v | notes %q",
		r.Summary, r.CPUTime, r.WallTime, r.PeakRSSBytes>>20, r.ExitCode, r.Signal, r.Limits, r.Isolation, r.Notes)
	return r
}

func wantOutcome(t *testing.T, r *Report, want Outcome) {
	t.Helper()
	if r.Outcome != want {
		t.Fatalf("outcome %q, want %q\nsummary: %s\nstderr: %s", r.Outcome, want, r.Summary, truncate(r.Stderr, 6000))
	}
}

func wantErrorIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
}

// testCommand starts the test binary in a child mode without Run.
func testCommand(t *testing.T, mode string) *exec.Cmd {
	cmd := exec.Command(testBinary(t), "-test.run=^$")
	cmd.Env = []string{childModeVar + "=" + mode}
	return cmd
}

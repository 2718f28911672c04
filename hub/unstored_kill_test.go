package hub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A message runs alone (a suspect after a death in its first run); its
// solo mark is stored, then its outcome write is refused (ENOSPC) and the
// process is killed with SIGKILL before the outcome is stored — three
// times. Those runs did not kill the process: at the next start, with a
// store that takes writes again, the message must not go to POISON as
// process-died (deaths counted from unmatched solo marks); it is parsed.
// Each phase is this test binary re-run as a child and killed for real.
func TestRefusedOutcomeBeforeAKillIsNoDeath(t *testing.T) {
	if phase := os.Getenv("EDIHUB_UNSTORED_CHILD"); phase != "" {
		unstoredChild(phase, os.Getenv("EDIHUB_UNSTORED_URL"), os.Getenv("EDIHUB_UNSTORED_DIR"))
		return
	}
	srv := jetstreamtest.StartServer(t, nil)
	dir := t.TempDir()
	run := func(phase string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRefusedOutcomeBeforeAKillIsNoDeath$")
		cmd.Env = append(os.Environ(), "EDIHUB_UNSTORED_CHILD="+phase, "EDIHUB_UNSTORED_URL="+srv.URL, "EDIHUB_UNSTORED_DIR="+dir)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("phase %s ended with %v, want a SIGKILL\n%s", phase, err, out)
		}
	}
	// The first child provisions the streams; the message is published
	// once they exist and kills that child in its handler.
	go func() {
		_, j := jetstreamtest.Connect(t, srv.URL)
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := j.Stream(context.Background(), "INGEST"); err == nil {
				jetstreamtest.PublishIngest(t, j, "ACME", "UNB+x'", nil)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	run("die")
	for i := 0; i < unstoredThreshold; i++ {
		run("refuse")
	}

	cfg := unstoredConfig()
	tab, suspects, err := counter.OpenInFlight(filepath.Join(dir, "inflight.map"), Slots(cfg, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	env := startHub(t, srv.URL, filepath.Join(dir, "counter.db"), cfg, []Stage{echoStage("parse", nil)}, func(o *Options) {
		o.InFlight, o.Suspects = tab, suspects
	})
	jetstreamtest.Eventually(t, 60*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "PARSED")+jetstreamtest.CountMsgs(t, env.js, "POISON") == 1
	}, "the message left INGEST")
	if n := jetstreamtest.CountMsgs(t, env.js, "POISON"); n != 0 {
		for _, m := range jetstreamtest.StreamMsgs(t, env.js, "POISON") {
			t.Logf("POISON: cause %s: %s %s %s", m.Header.Get(wire.HdrPoisonCause), m.Header.Get(wire.HdrErrorMsg), "deaths", m.Header.Get(wire.HdrProcessDeaths))
		}
		t.Fatal("a run whose outcome the store refused was charged as a death")
	}
}

const unstoredThreshold = 3

func unstoredConfig() Config {
	cfg := fastConfig()
	cfg.Attempts.Threshold = unstoredThreshold
	cfg.Retry.MaxAttempts = 50 // transient, retried in place: never exhausted here
	return cfg
}

// refusingStore takes the solo marks but refuses every outcome, as a full
// disk refuses the larger write; the first read after a refusal (the
// message's next delivery) kills the process.
type refusingStore struct {
	*counter.Store
	refused atomic.Bool
}

func (s *refusingStore) RecordFailure(k counter.Key, f counter.Failure) (counter.Record, error) {
	s.refused.Store(true)
	return counter.Record{}, fmt.Errorf("record failure of %s: write counter.db: %w", k, syscall.ENOSPC)
}

func (s *refusingStore) Get(k counter.Key) (counter.Record, error) {
	if s.refused.Load() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	return s.Store.Get(k)
}

func unstoredChild(phase, url, dir string) {
	fail := func(err error) { fmt.Fprintln(os.Stderr, err); os.Exit(3) }
	cfg := unstoredConfig()
	tab, suspects, err := counter.OpenInFlight(filepath.Join(dir, "inflight.map"), Slots(cfg, 1))
	if err != nil {
		fail(err)
	}
	store, err := counter.Open(filepath.Join(dir, "counter.db"), nil)
	if err != nil {
		fail(err)
	}
	stage := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		if phase == "die" {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		// transient: retried in place (strict mode), never poison by repetition
		return TransientError(wire.CauseUnknown, errors.New("partner directory did not answer"))
	}}
	var st AttemptStore = store
	if phase == "refuse" {
		st = &refusingStore{Store: store}
	}
	nc, _, err := ejs.Connect(url, "hub-child")
	if err != nil {
		fail(err)
	}
	h, err := New(Options{Config: cfg, Conn: nc, Store: st, Stages: []Stage{stage}, InFlight: tab, Suspects: suspects,
		Logger: zerolog.New(os.Stderr).Level(zerolog.WarnLevel)})
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fail(fmt.Errorf("the hub stopped without being killed: %v", h.Run(ctx)))
}

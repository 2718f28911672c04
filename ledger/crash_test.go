package ledger

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// crashChildEnv tells the test binary it is the child of
// TestIndexFileSurvivesKill9: "url|index file|first key".
const crashChildEnv = "EDIHUB_LEDGER_CRASH_CHILD"

// A kill -9 of a process that commits interchanges, writes its index file
// in small batches and checkpoints often, at whatever moment it lands (in
// a bbolt write, between a commit and its write, in a checkpoint's read),
// never makes an interchange it was told was stored look unseen after the
// restart; and the restart reads only the bucket's tail, not its history.
func TestIndexFileSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	path := filepath.Join(t.TempDir(), "ledger-index.db")
	acked := 0
	for round := range 4 {
		target := acked + 200 + 130*round // kill at a different moment each round
		cmd := exec.Command(os.Args[0], "-test.run", "^TestIndexFileCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d", crashChildEnv, srv.URL, path, acked))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		for acked < target && sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
				acked, _ = strconv.Atoi(n)
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() { // what it printed before the signal landed
			if n, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
				acked, _ = strconv.Atoi(n)
			}
		}
		_ = cmd.Wait()
		if acked < target {
			t.Fatalf("round %d: the child stopped at %d acked interchanges, before %d", round, acked, target)
		}
	}
	s := openKV(t, js, &KVOptions{IndexFile: path})
	for i := range acked {
		if seen, err := s.Seen(ckKey(i)); err != nil || !seen {
			t.Fatalf("interchange %d of %d acked before a kill -9 is unseen after it: %v %v", i, acked, seen, err)
		}
	}
	total := jetstreamtest.CountMsgs(t, js, "KV_edihub-ledger")
	if n := s.ix.tailRead.Load(); n >= int64(total)/2 {
		t.Fatalf("the restart read %d of the bucket's %d messages: the file was not used", n, total)
	}
	t.Logf("%d interchanges acked over 4 kills; the restart read %d of %d messages", acked, s.ix.tailRead.Load(), total)
}

// TestIndexFileCrashChild is the child of TestIndexFileSurvivesKill9 (it
// skips otherwise): it commits batches of ten interchanges, prints the
// number acked, and checkpoints every seventh batch, until killed (or 100 000 interchanges).
func TestIndexFileCrashChild(t *testing.T) {
	arg := os.Getenv(crashChildEnv)
	if arg == "" {
		t.Skip("only as the child of TestIndexFileSurvivesKill9")
	}
	parts := strings.Split(arg, "|")
	first, _ := strconv.Atoi(parts[2])
	flushAfter = 37 // many writes, so that the kill lands in or near one
	_, js := jetstreamtest.Connect(t, parts[0])
	s := openKV(t, js, &KVOptions{IndexFile: parts[1]})
	if seen, err := s.Seen(ckKey(first - 1)); err != nil || (first > 0 && !seen) {
		t.Fatalf("child: interchange %d before its start: %v %v", first-1, seen, err)
	}
	ctx := context.Background()
	for i := first; i < first+100_000; i += 10 {
		commitKeys(t, s, i, i+10)
		fmt.Printf("acked %d\n", i+10)
		if (i/10)%7 == 0 {
			if err := s.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}

package counter

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The child writes a slot and dies with SIGKILL-like abruptness (os.Exit
// skips every cleanup); the parent finds the suspect it left behind.
func TestInFlightSurvivesProcessDeath(t *testing.T) {
	if os.Getenv("EDIHUB_INFLIGHT_CHILD") != "" {
		tab, _, err := OpenInFlight(os.Getenv("EDIHUB_INFLIGHT_CHILD"), 4)
		if err != nil {
			os.Exit(3)
		}
		tab.Start(1, 42)
		tab.Start(2, 7)
		tab.Done(2, 7)
		tab.Done(1, 99) // not its message: slot 1 keeps 42
		os.Exit(0)      // no Close: the process just ends
	}
	path := filepath.Join(t.TempDir(), "inflight.map")
	cmd := exec.Command(os.Args[0], "-test.run=^TestInFlightSurvivesProcessDeath$")
	cmd.Env = append(os.Environ(), "EDIHUB_INFLIGHT_CHILD="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	tab, suspects, err := OpenInFlight(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(suspects) != 1 || suspects[0] != (Suspect{Slot: 1, Seq: 42}) {
		t.Fatalf("suspects %v, want slot 1 seq 42", suspects)
	}
	tab.Start(0, 9)
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	// a clean stop leaves none; a different slot count ignores the table
	_, suspects, err = OpenInFlight(path, 4)
	if err != nil || len(suspects) != 0 {
		t.Fatalf("after a clean stop: %v %v", suspects, err)
	}
}

// TestInFlightDoneAfterClose: a handler abandoned past its deadline may
// finish after the hub stopped and closed the table; its Done (and a late
// Start) must neither fault nor write a suspect into the closed file.
func TestInFlightDoneAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inflight")
	tab, _, err := OpenInFlight(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	tab.Start(1, 42)
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	tab.Done(1, 42)
	tab.Start(2, 43)
	if err := tab.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	_, suspects, err := OpenInFlight(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(suspects) != 0 {
		t.Fatalf("suspects after a clean stop: %v", suspects)
	}
}

// The unstored-outcome count outlives both a death (the child exits with
// no cleanup) and a clean stop, unlike the running word; a different
// sequence resets it, and a changed slot count drops it.
func TestInFlightUnstoredOutlivesDeathAndStop(t *testing.T) {
	if path := os.Getenv("EDIHUB_INFLIGHT_UNSTORED_CHILD"); path != "" {
		tab, _, err := OpenInFlight(path, 4)
		if err != nil {
			os.Exit(3)
		}
		tab.Start(1, 42)
		tab.SetUnstored(1, 42, 2)
		tab.SetUnstored(2, 7, 1)
		tab.SetUnstored(2, 8, 1) // slot 2 moved on: counts 8 only
		tab.SetUnstored(3, 9, 1)
		tab.SetUnstored(3, 9, 0) // stored after all
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "inflight.map")
	cmd := exec.Command(os.Args[0], "-test.run=^TestInFlightUnstoredOutlivesDeathAndStop$")
	cmd.Env = append(os.Environ(), "EDIHUB_INFLIGHT_UNSTORED_CHILD="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	check := func(when string, tab *InFlight) {
		t.Helper()
		for slot, want := range []struct {
			seq uint64
			n   int
		}{{0, 0}, {42, 2}, {8, 1}, {0, 0}} {
			if seq, n := tab.Unstored(slot); seq != want.seq || n != want.n {
				t.Errorf("%s: slot %d unstored (%d, %d), want (%d, %d)", when, slot, seq, n, want.seq, want.n)
			}
		}
	}
	tab, suspects, err := OpenInFlight(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(suspects) != 1 || suspects[0] != (Suspect{Slot: 1, Seq: 42}) {
		t.Fatalf("suspects %v, want slot 1 seq 42", suspects)
	}
	check("after a death", tab)
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	tab, suspects, err = OpenInFlight(path, 4)
	if err != nil || len(suspects) != 0 {
		t.Fatalf("after a clean stop: suspects %v, %v", suspects, err)
	}
	check("after a clean stop", tab)
	tab.Close()
	tab, _, err = OpenInFlight(path, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if seq, n := tab.Unstored(1); seq != 0 || n != 0 {
		t.Errorf("a changed slot count kept (%d, %d)", seq, n)
	}
}

// A table the release before wrote (16-byte slots, running words only)
// still names its suspects once.
func TestInFlightReadsTheVersionOneTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inflight.map")
	b := make([]byte, headerSize+4*slotSizeV1)
	binary.LittleEndian.PutUint64(b[0:], inflightMagicV1)
	binary.LittleEndian.PutUint64(b[8:], 4)
	binary.LittleEndian.PutUint64(b[headerSize+2*slotSizeV1:], 77)
	binary.LittleEndian.PutUint64(b[headerSize+3*slotSizeV1:], 5) // v1 had no unstored word: its bytes are not read as one
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tab, suspects, err := OpenInFlight(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if len(suspects) != 2 || suspects[0] != (Suspect{Slot: 2, Seq: 77}) || suspects[1] != (Suspect{Slot: 3, Seq: 5}) {
		t.Fatalf("suspects %v, want slot 2 seq 77, slot 3 seq 5", suspects)
	}
	for slot := 0; slot < 4; slot++ {
		if seq, n := tab.Unstored(slot); seq != 0 || n != 0 {
			t.Errorf("slot %d unstored (%d, %d) from a v1 table", slot, seq, n)
		}
	}
}

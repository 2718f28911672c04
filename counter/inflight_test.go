package counter

import (
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

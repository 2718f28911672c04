package test

import (
	"context"
	"encoding/json"
	"github.com/edihub/edihub/edifact/edifacttest"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
)

// Test 2: the real binary under a restart loop; a drill `exit` message
// kills it every time it is tried. After the threshold it is in POISON
// with a cause that says the process died, the partition continues, and
// every message published is found exactly once in PARSED or POISON.
func TestProcessKillLoop(t *testing.T) {
	h := startHub(t, "--drill")
	_, j := jetstreamtest.Connect(t, h.url)
	// traffic on other partners, before and during the drill
	ctx := context.Background()
	var published int
	for _, p := range []string{"ACME", "GLOBEX", "INITECH"} {
		for i := 0; i < 3; i++ {
			if _, err := j.PublishMsg(ctx, &nats.Msg{Subject: "edi.ingest." + p, Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "R"+p+string(rune('0'+i))))}); err != nil {
				t.Fatal(err)
			}
			published++
		}
	}
	out, errOut, code := runCLI(t, 90*time.Second, "drill", "--server", h.url, "--kind", "exit", "--healthy", "3")
	t.Logf("edihub drill --kind exit:\n%s%s", out, errOut)
	if code != 0 {
		t.Fatalf("drill exited %d", code)
	}
	for _, want := range []string{"expect the hub to die", "death 1: the hub went away", "x-poison-cause=process-died",
		"while the drill message ran alone (x-process-deaths", "moved on", "passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("drill output lacks %q", want)
		}
	}
	if n := h.startCount(); n < 4 {
		t.Fatalf("the hub was started %d times; the drill should have killed it at least threshold (3) times", n)
	}
	published += 4 // the drill message and its 3 healthy followers

	nc2, j2 := jetstreamtest.Connect(t, h.url)
	_ = nc2
	var parsed, poison map[uint64]int
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		parsed, poison = originSeqs(t, j2, "PARSED"), originSeqs(t, j2, "POISON")
		return len(parsed)+len(poison) == published
	})
	for seq := uint64(1); seq <= uint64(published); seq++ {
		if n := parsed[seq] + poison[seq]; n != 1 {
			t.Errorf("INGEST seq %d found %d times (parsed %d, poison %d), want exactly once", seq, n, parsed[seq], poison[seq])
		}
	}
	if len(poison) != 1 {
		t.Fatalf("poison holds %d interchanges, want only the drill message", len(poison))
	}
}

// drill --json prints one document: the steps and the outcome.
func TestDrillJSONIsOneDocument(t *testing.T) {
	h := startHub(t, "--drill")
	out, errOut, code := runCLI(t, 60*time.Second, "drill", "--server", h.url, "--kind", "error", "--healthy", "1", "--json")
	var doc struct {
		Kind  string           `json:"kind"`
		OK    bool             `json:"ok"`
		Steps []map[string]any `json:"steps"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Kind != "error" || !doc.OK || len(doc.Steps) < 3 {
		t.Fatalf("drill --json: exit %d\n%s%s", code, out, errOut)
	}
}

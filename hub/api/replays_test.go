package api

import (
	"net/http"
	"testing"

	"github.com/edihub/edihub/edifact/edifacttest"
)

// A replay through the API waits for its outcome and records a batch the
// API lists and reads back with its tally.
func TestAPIReplayOutcomeAndBatches(t *testing.T) {
	e := newOpsEnv(t)
	e.deadLetters(t, "ACME", 1, edifacttest.BadCount("S:14", "R:14", "B1"))
	srv := apiServer(t, e)
	if code, _ := call(t, srv, "POST", "/api/v1/dlq/DLQ:1/replay", opTok, `{"outcome":"forever"}`); code != http.StatusBadRequest {
		t.Fatalf("bad outcome: %d", code)
	}
	code, out := call(t, srv, "POST", "/api/v1/dlq/DLQ:1/replay", opTok, `{"outcome":"20s"}`)
	if code != 200 || out["batch"] == nil {
		t.Fatalf("replay: %d %v", code, out)
	}
	it := out["items"].([]any)[0].(map[string]any)
	if it["outcome"] != "dead-lettered" || it["where"] != "DLQ:2" {
		t.Fatalf("outcome: %v", it)
	}
	batch := out["batch"].(string)
	if code, out := call(t, srv, "GET", "/api/v1/replays", readTok, ""); code != 200 || len(out["replays"].([]any)) != 1 {
		t.Fatalf("replays: %d %v", code, out)
	}
	code, out = call(t, srv, "GET", "/api/v1/replays/"+batch, readTok, "")
	if code != 200 || out["tally"].(map[string]any)["dead-lettered"] != float64(1) || out["operator"] != "bob" {
		t.Fatalf("replay batch: %d %v", code, out)
	}
	if code, _ := call(t, srv, "GET", "/api/v1/replays/R-none", readTok, ""); code != http.StatusNotFound {
		t.Fatalf("unknown batch: %d", code)
	}
}

package api

import (
	"encoding/base64"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"
)

func idsOf(out map[string]any) []string {
	var ids []string
	for _, m := range out["messages"].([]any) {
		ids = append(ids, m.(map[string]any)["id"].(string))
	}
	return ids
}

// The paged listing and the overview come from the entry cache: a new
// dead letter appears, a dropped, parked or replayed one leaves, and an
// edited original is hidden behind its edit, as ops.Inspect shows them.
func TestEntryCacheFollowsTheStreams(t *testing.T) {
	e := newOpsEnv(t)
	e.deadLetters(t, "ACME", 3, "junk one", "junk two", "junk three")
	srv := httptest.NewServer(NewWithOptions(Options{Ops: e.ops, Logger: zerolog.Nop(), JS: e.JS,
		Tokens: []Token{{Name: "bob", Token: opTok, Role: RoleOperator}}}))
	t.Cleanup(srv.Close)
	page := func() []string {
		t.Helper()
		code, out := call(t, srv, "GET", "/api/v1/dlq?view=messages&limit=10", opTok, "")
		if code != 200 {
			t.Fatalf("list: %d %v", code, out)
		}
		return idsOf(out)
	}
	same := func(got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("listed %v, want %v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("listed %v, want %v", got, want)
			}
		}
	}
	same(page(), "DLQ:1", "DLQ:2", "DLQ:3")

	e.deadLetters(t, "GLOBEX", 4, "junk four")
	same(page(), "DLQ:1", "DLQ:2", "DLQ:3", "DLQ:4")

	if code, out := call(t, srv, "POST", "/api/v1/dlq/DLQ:2/drop", opTok, `{"reason":"test file"}`); code != 200 {
		t.Fatalf("drop: %d %v", code, out)
	}
	if code, out := call(t, srv, "POST", "/api/v1/dlq/DLQ:3/park", opTok, `{"reason":"later"}`); code != 200 {
		t.Fatalf("park: %d %v", code, out)
	}
	same(page(), "DLQ:1", "DLQ:4", "PARKING:1")

	body := `{"payload":"` + base64.StdEncoding.EncodeToString([]byte("UNA:+.? 'UNB+UNOC:3+SENDER1:14+RECEIVER1:14+261130:1200+R1'UNH+1+INVOIC:D:96A:UN'BGM+380+R1+9'UNT+3+1'UNZ+1+R1'")) + `","reason":"fix"}`
	if code, out := call(t, srv, "POST", "/api/v1/dlq/DLQ:1/edit", opTok, body); code != 200 || out["edited"] != "DLQ:5" {
		t.Fatalf("edit: %d %v", code, out)
	}
	same(page(), "DLQ:4", "DLQ:5", "PARKING:1")
	code, out := call(t, srv, "GET", "/api/v1/overview", opTok, "")
	sum := out["summary"].(map[string]any)
	if code != 200 || sum["totals"].(map[string]any)["dlq"].(float64) != 2 || sum["superseded"].(float64) != 1 ||
		sum["totals"].(map[string]any)["parking"].(float64) != 1 {
		t.Fatalf("overview summary: %d %v", code, sum)
	}
	// The unpaged listing reads the streams as the CLI does, and agrees.
	code, out = call(t, srv, "GET", "/api/v1/dlq?view=messages", opTok, "")
	same(idsOf(out), "DLQ:4", "DLQ:5", "PARKING:1")

	// Replaying the edit removes it; the original stays hidden.
	if code, out := call(t, srv, "POST", "/api/v1/dlq/DLQ:1/replay", opTok, `{"reason":"fixed"}`); code != 200 || out["replayed"].(float64) != 1 {
		t.Fatalf("replay: %d %v", code, out)
	}
	same(page(), "DLQ:4", "PARKING:1")
	code, out = call(t, srv, "GET", "/api/v1/dlq?view=messages", opTok, "")
	same(idsOf(out), "DLQ:4", "PARKING:1")
}

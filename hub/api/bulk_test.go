package api

import (
	"maps"
	"testing"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// Park and drop by filter over HTTP: a read token may dry-run but not
// act; the operator's park acts on the filter's messages up to max and
// says how many are left.
func TestAPIBulkFilter(t *testing.T) {
	e := newOpsEnv(t)
	e.deadLetters(t, "ACME", 3, "junk one", "junk two", "junk three")
	srv := apiServer(t, e)
	before := jetstreamtest.StreamStates(t, e.JS, "DLQ", "PARKING", "AUDIT")

	code, out := call(t, srv, "POST", "/api/v1/dlq/park", readTok, `{"filter":"code=13","max":2,"dry_run":true,"reason":"junk"}`)
	if code != 200 || out["dry_run"] != true || out["matched"].(float64) != 3 || out["done"].(float64) != 2 || out["left"].(float64) != 1 {
		t.Fatalf("read token dry run: %d %v", code, out)
	}
	for _, c := range []struct {
		token, body string
		want        int
	}{
		{readTok, `{"filter":"code=13","reason":"junk"}`, 403},
		{opTok, `{"filter":"code=13"}`, 400},
		{opTok, `{"filter":"code=abc","reason":"junk"}`, 400},
		{opTok, `{"filter":"code=13","ids":["DLQ:1"],"reason":"junk"}`, 400},
		{opTok, `{"filter":"code=13","max":5000,"reason":"junk"}`, 400},
	} {
		if code, out := call(t, srv, "POST", "/api/v1/dlq/drop", c.token, c.body); code != c.want {
			t.Errorf("drop %s: %d %v, want %d", c.body, code, out, c.want)
		}
	}
	if after := jetstreamtest.StreamStates(t, e.JS, "DLQ", "PARKING", "AUDIT"); !maps.Equal(before, after) {
		t.Fatalf("dry runs and refusals changed something: %v → %v", before, after)
	}
	code, out = call(t, srv, "POST", "/api/v1/dlq/park", opTok, `{"filter":"stage=parse,cause=schema,code=13","max":2,"reason":"junk batch"}`)
	if code != 200 || out["done"].(float64) != 2 || out["left"].(float64) != 1 || out["filter"] != "kind=dlq,stage=parse,cause=schema,code=13" {
		t.Fatalf("park by filter: %d %v", code, out)
	}
	if ev := lastAudit(t, e.JS); ev.Action != "park" || ev.Actor != "bob" || ev.Details["filter"] != "kind=dlq,stage=parse,cause=schema,code=13" {
		t.Fatalf("audited as %+v", ev)
	}
	// Named IDs are their own cap, as before.
	if code, out := call(t, srv, "POST", "/api/v1/dlq/drop", opTok, `{"ids":["DLQ:3","PARKING:1"],"reason":"junk"}`); code != 200 || out["done"].(float64) != 2 {
		t.Fatalf("drop by IDs: %d %v", code, out)
	}
}

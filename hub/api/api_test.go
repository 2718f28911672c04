package api

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/rs/zerolog"
)

const (
	readTok = "read-token-0123456789abcdef"
	opTok   = "operator-token-0123456789abcdef"
)

func apiServer(t *testing.T, e *opsEnv) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(NewWithOptions(Options{Ops: e.ops, Tokens: []Token{
		{Name: "console-ro", Token: readTok, Role: RoleRead},
		{Name: "bob", Token: opTok, Role: RoleOperator},
	}, Logger: zerolog.Nop()}))
	t.Cleanup(srv.Close)
	return srv
}

func call(t *testing.T, srv *httptest.Server, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

func TestAPIRefusesWritesWithoutAnOperatorToken(t *testing.T) {
	e := newOpsEnv(t)
	e.deadLetters(t, "ACME", 2, "junk one", "junk two")
	srv := apiServer(t, e)
	before := jetstreamtest.StreamStates(t, e.JS, "DLQ", "AUDIT", "INGEST", "PARKING")

	for _, c := range []struct{ method, path, token, body string }{
		{"GET", "/api/v1/dlq", "", ""},
		{"POST", "/api/v1/dlq/DLQ:1/drop", "", `{"reason":"x"}`},
		{"POST", "/api/v1/dlq/DLQ:1/drop", "wrong-token-0123456789", `{"reason":"x"}`},
		{"POST", "/api/v1/dlq/DLQ:1/replay", "Basic " + opTok, `{}`},
	} {
		if code, _ := call(t, srv, c.method, c.path, c.token, c.body); code != http.StatusUnauthorized {
			t.Fatalf("%s %s with %q: %d, want 401", c.method, c.path, c.token, code)
		}
	}
	for _, c := range []struct{ path, body string }{
		{"/api/v1/dlq/DLQ:1/drop", `{"reason":"x"}`},
		{"/api/v1/dlq/DLQ:1/park", `{}`},
		{"/api/v1/dlq/DLQ:1/replay", `{}`},
		{"/api/v1/dlq/DLQ:1/edit", `{"payload":"eA=="}`},
		{"/api/v1/dlq/replay", `{"filter":"partner=ACME"}`},
	} {
		if code, _ := call(t, srv, "POST", c.path, readTok, c.body); code != http.StatusForbidden {
			t.Fatalf("read token POST %s: %d, want 403", c.path, code)
		}
	}
	if after := jetstreamtest.StreamStates(t, e.JS, "DLQ", "AUDIT", "INGEST", "PARKING"); !maps.Equal(before, after) {
		t.Fatalf("refused requests changed something: %v → %v", before, after)
	}

	// A read token may look (audited under its name) and dry-run.
	code, out := call(t, srv, "GET", "/api/v1/dlq", readTok, "")
	if code != 200 || out["totals"].(map[string]any)["dlq"].(float64) != 2 {
		t.Fatalf("summary: %d %v", code, out)
	}
	// Two junk files differ only in what they quote: one group (no
	// interchange header, code 13) with two fingerprints.
	if code, out := call(t, srv, "GET", "/api/v1/dlq?view=groups&cause=schema", readTok, ""); code != 200 || len(out["groups"].([]any)) != 1 ||
		len(out["groups"].([]any)[0].(map[string]any)["subgroups"].([]any)) != 2 {
		t.Fatalf("groups: %d %v", code, out)
	}
	if code, out := call(t, srv, "GET", "/api/v1/dlq?view=groups&cause=schema&error_code=13&limit=1&max_ids=0", readTok, ""); code != 200 || len(out["groups"].([]any)) != 1 ||
		len(out["groups"].([]any)[0].(map[string]any)["ids"].([]any)) != 2 {
		t.Fatalf("one group by its filter, all IDs: %d %v", code, out)
	}
	if code, out := call(t, srv, "GET", "/api/v1/dlq/DLQ:1", readTok, ""); code != 200 || out["payload"] != "anVuayBvbmU=" {
		t.Fatalf("show: %d %v", code, out)
	}
	if ev := lastAudit(t, e.JS); ev.Action != "show" || ev.Actor != "console-ro" {
		t.Fatalf("show via API audited as %+v", ev)
	}
	if code, out := call(t, srv, "POST", "/api/v1/dlq/replay", readTok, `{"filter":"partner=ACME","dry_run":true}`); code != 200 || out["dry_run"] != true {
		t.Fatalf("dry-run with read token: %d %v", code, out)
	}

	// Operator: drop needs a reason; the actor is the token's name.
	if code, _ := call(t, srv, "POST", "/api/v1/dlq/DLQ:1/drop", opTok, `{}`); code != http.StatusBadRequest {
		t.Fatalf("drop without reason: %d", code)
	}
	if code, out := call(t, srv, "POST", "/api/v1/dlq/DLQ:1/drop", opTok, `{"reason":"onboarding test"}`); code != 200 || out["ok"] != true {
		t.Fatalf("drop: %d %v", code, out)
	}
	if ev := lastAudit(t, e.JS); ev.Action != "drop" || ev.Actor != "bob" || ev.Reason != "onboarding test" {
		t.Fatalf("drop via API audited as %+v", ev)
	}
	if code, _ := call(t, srv, "GET", "/api/v1/dlq/DLQ:1", readTok, ""); code != http.StatusNotFound {
		t.Fatalf("dropped message: %d", code)
	}
	if code, out := call(t, srv, "POST", "/api/v1/dlq/DLQ:2/park", opTok, `{"reason":"later"}`); code != 200 || out["new_id"] != "PARKING:1" {
		t.Fatalf("park: %d %v", code, out)
	}
	if code, out := call(t, srv, "GET", "/api/v1/audit/verify", readTok, ""); code != 200 || out["ok"] != true {
		t.Fatalf("verify: %d %v", code, out)
	}
	if code, out := call(t, srv, "GET", "/api/v1/audit?since=1h&limit=2", readTok, ""); code != 200 || len(out["events"].([]any)) != 2 {
		t.Fatalf("audit ls: %d %v", code, out)
	}
	if code, _ := call(t, srv, "GET", "/api/v1/dlq/NOPE:1", readTok, ""); code != http.StatusBadRequest {
		t.Fatalf("bad id: %d", code)
	}
}

func TestAPIConfig(t *testing.T) {
	c := Config{Tokens: []TokenConfig{
		{Name: "console", TokenEnv: "EDIHUB_TOKEN_CONSOLE"},
		{Name: "ops", Token: opTok, Role: RoleOperator},
	}}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Tokens[0].Role != RoleRead {
		t.Fatalf("default role %q", c.Tokens[0].Role)
	}
	if _, err := c.Resolve(func(string) string { return "" }); err == nil {
		t.Fatal("unset token_env accepted")
	}
	toks, err := c.Resolve(func(k string) string { return map[string]string{"EDIHUB_TOKEN_CONSOLE": readTok}[k] })
	if err != nil || toks[0].Token != readTok || toks[1].Role != RoleOperator {
		t.Fatalf("resolve: %+v %v", toks, err)
	}
	for _, bad := range []TokenConfig{
		{Name: "", Token: opTok, Role: RoleRead},
		{Name: "x", Token: "short", Role: RoleRead},
		{Name: "x", Token: opTok, TokenEnv: "E", Role: RoleRead},
		{Name: "x", Token: opTok, Role: "admin"},
	} {
		c := Config{Tokens: []TokenConfig{bad}}
		if err := c.Validate(); err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}
}

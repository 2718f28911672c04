package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// fakeClock is a settable clock for session expiry.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func sessionServer(t *testing.T, e *opsEnv, clock *fakeClock) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(NewWithOptions(Options{Ops: e.ops, Logger: zerolog.Nop(), Now: clock.now, SessionTTL: time.Hour,
		Tokens: []Token{{Name: "console-ro", Token: readTok, Role: RoleRead}, {Name: "bob", Token: opTok, Role: RoleOperator}}}))
	t.Cleanup(srv.Close)
	return srv
}

// request sends one request with an optional session cookie and CSRF token.
func request(t *testing.T, srv *httptest.Server, method, path, cookie, csrf, contentType, body string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: cookieName(req), Value: cookie})
	}
	if csrf != "" {
		req.Header.Set(CSRFHeader, csrf)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp, out
}

func loginAs(t *testing.T, srv *httptest.Server, token string) (cookie, csrf string) {
	t.Helper()
	resp, out := request(t, srv, "POST", "/api/v1/session", "", "", "application/json", `{"token":"`+token+`"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("login: %d %v", resp.StatusCode, out)
	}
	for _, c := range resp.Cookies() {
		if c.Name == cookieName(resp.Request) {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Value == "" {
				t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/", c)
			}
			cookie = c.Value
		}
	}
	csrf, _ = out["csrf"].(string)
	if cookie == "" || len(csrf) < 32 || cookie == csrf {
		t.Fatalf("login gave cookie %q and csrf %q", cookie, csrf)
	}
	return cookie, csrf
}

func TestConsoleSessionsCSRFAndExpiry(t *testing.T) {
	e := newOpsEnv(t)
	e.deadLetters(t, "ACME", 3, "junk one", "junk two", "junk three")
	clock := &fakeClock{t: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}
	srv := sessionServer(t, e, clock)

	// Login takes JSON only (a cross-site form cannot post it) and a known token.
	if resp, _ := request(t, srv, "POST", "/api/v1/session", "", "", "application/x-www-form-urlencoded", "token="+opTok); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("form login: %d", resp.StatusCode)
	}
	if resp, _ := request(t, srv, "POST", "/api/v1/session", "", "", "application/json", `{"token":"wrong-token-0123456789"}`); resp.StatusCode != 401 || len(resp.Cookies()) != 0 {
		t.Fatalf("unknown token login: %d %v", resp.StatusCode, resp.Cookies())
	}

	cookie, csrf := loginAs(t, srv, opTok)
	if resp, out := request(t, srv, "GET", "/api/v1/session", cookie, "", "", ""); resp.StatusCode != 200 || out["name"] != "bob" || out["role"] != "operator" || out["csrf"] != csrf {
		t.Fatalf("session info: %d %v", resp.StatusCode, out)
	}
	if resp, out := request(t, srv, "GET", "/api/v1/dlq", cookie, "", "", ""); resp.StatusCode != 200 || out["totals"] == nil {
		t.Fatalf("read with the session: %d %v", resp.StatusCode, out)
	}
	before := jetstreamtest.StreamStates(t, e.JS, "DLQ", "PARKING", "AUDIT")
	for _, c := range []struct{ name, csrf string }{{"no CSRF token", ""}, {"a wrong CSRF token", csrf + "x"}, {"another session's CSRF token", ""}} {
		tok := c.csrf
		if c.name == "another session's CSRF token" {
			_, tok = loginAs(t, srv, opTok)
		}
		if resp, out := request(t, srv, "POST", "/api/v1/dlq/DLQ:1/park", cookie, tok, "application/json", `{"reason":"x"}`); resp.StatusCode != 403 {
			t.Fatalf("park with %s: %d %v, want 403", c.name, resp.StatusCode, out)
		}
	}
	if after := jetstreamtest.StreamStates(t, e.JS, "DLQ", "PARKING", "AUDIT"); after["PARKING"] != before["PARKING"] || after["DLQ"] != before["DLQ"] {
		t.Fatalf("refused writes changed something: %v → %v", before, after)
	}
	if resp, out := request(t, srv, "POST", "/api/v1/dlq/DLQ:1/park", cookie, csrf, "application/json", `{"reason":"waiting"}`); resp.StatusCode != 200 || out["new_id"] != "PARKING:1" {
		t.Fatalf("park with session and CSRF: %d %v", resp.StatusCode, out)
	}
	if ev := lastAudit(t, e.JS); ev.Action != "park" || ev.Actor != "bob" {
		t.Fatalf("park via session audited as %+v", ev)
	}

	// A read session may look but not act, CSRF token or not.
	rc, rcsrf := loginAs(t, srv, readTok)
	if resp, _ := request(t, srv, "POST", "/api/v1/dlq/drop", rc, rcsrf, "application/json", `{"ids":["DLQ:2"],"reason":"x"}`); resp.StatusCode != 403 {
		t.Fatalf("read session drop: %d", resp.StatusCode)
	}

	// Expiry: after the TTL the cookie is worth nothing.
	clock.add(time.Hour + time.Second)
	if resp, out := request(t, srv, "GET", "/api/v1/dlq", cookie, "", "", ""); resp.StatusCode != 401 || !strings.Contains(out["error"].(string), "expired") {
		t.Fatalf("expired session: %d %v", resp.StatusCode, out)
	}

	// Logout needs the CSRF token and ends the session.
	cookie, csrf = loginAs(t, srv, opTok)
	if resp, _ := request(t, srv, "DELETE", "/api/v1/session", cookie, "", "", ""); resp.StatusCode != 403 {
		t.Fatalf("logout without CSRF: %d", resp.StatusCode)
	}
	if resp, _ := request(t, srv, "DELETE", "/api/v1/session", cookie, csrf, "", ""); resp.StatusCode != 200 {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if resp, _ := request(t, srv, "GET", "/api/v1/dlq", cookie, "", "", ""); resp.StatusCode != 401 {
		t.Fatalf("after logout: %d", resp.StatusCode)
	}
}

// Bulk park and drop (a failure group) need a reason; listings page on
// the server.
func TestConsoleBulkAndPagination(t *testing.T) {
	e := newOpsEnv(t)
	e.deadLetters(t, "ACME", 5, "junk 1", "junk 2", "junk 3", "junk 4", "junk 5")
	srv := apiServer(t, e)

	code, out := call(t, srv, "GET", "/api/v1/dlq?view=messages&limit=2&offset=1&order=newest", readTok, "")
	msgs, _ := out["messages"].([]any)
	if code != 200 || out["total"].(float64) != 5 || len(msgs) != 2 || msgs[0].(map[string]any)["id"] != "DLQ:4" {
		t.Fatalf("page 2 newest first: %d %v", code, out)
	}
	if code, out := call(t, srv, "GET", "/api/v1/dlq?view=messages&offset=9", readTok, ""); code != 200 || len(out["messages"].([]any)) != 0 {
		t.Fatalf("past the end: %d %v", code, out)
	}
	if code, _ := call(t, srv, "GET", "/api/v1/dlq?view=messages&limit=-1", readTok, ""); code != 400 {
		t.Fatalf("negative limit: %d", code)
	}
	if code, out := call(t, srv, "GET", "/api/v1/dlq?view=groups&max_ids=1", readTok, ""); code != 200 || len(out["groups"].([]any)[0].(map[string]any)["ids"].([]any)) != 1 {
		t.Fatalf("groups with max_ids: %d %v", code, out)
	}

	if code, _ := call(t, srv, "POST", "/api/v1/dlq/drop", opTok, `{"ids":["DLQ:1","DLQ:2"]}`); code != 400 {
		t.Fatalf("bulk drop without reason: %d", code)
	}
	if code, _ := call(t, srv, "POST", "/api/v1/dlq/park", readTok, `{"ids":["DLQ:1"],"reason":"x"}`); code != 403 {
		t.Fatalf("bulk park with a read token: %d", code)
	}
	code, out = call(t, srv, "POST", "/api/v1/dlq/park", opTok, `{"ids":["DLQ:1","DLQ:2"],"reason":"waiting for ACME"}`)
	if code != 200 || out["done"].(float64) != 2 {
		t.Fatalf("bulk park: %d %v", code, out)
	}
	code, out = call(t, srv, "POST", "/api/v1/dlq/drop", opTok, `{"ids":["DLQ:3","DLQ:1"],"reason":"test files"}`)
	if code != http.StatusMultiStatus || out["done"].(float64) != 1 || out["failed"].(float64) != 1 {
		t.Fatalf("bulk drop with one gone: %d %v", code, out)
	}
	if ev := lastAudit(t, e.JS); ev.Action != "drop" || ev.Actor != "bob" || ev.Reason != "test files" {
		t.Fatalf("bulk drop audited as %+v", ev)
	}
}

// A read token's logins never evict an operator's session; failed logins
// earn a client a back-off; the cookie is port-scoped without TLS.
func TestConsoleLoginLimits(t *testing.T) {
	e := newOpsEnv(t)
	clock := &fakeClock{t: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}
	srv := sessionServer(t, e, clock)
	opCookie, _ := loginAs(t, srv, opTok)
	for i := 0; i < maxSessionsPerToken+5; i++ {
		if i > 0 && i%loginsPerMinute == 0 {
			clock.add(time.Minute) // stay under the per-token rate
		}
		loginAs(t, srv, readTok)
	}
	if resp, out := request(t, srv, "GET", "/api/v1/session", opCookie, "", "", ""); resp.StatusCode != 200 || out["name"] != "bob" {
		t.Fatalf("the operator's session was evicted by a read token's logins: %d %v", resp.StatusCode, out)
	}
	// Per token: more than loginsPerMinute logins in a minute are refused.
	clock.add(time.Minute)
	for i := 0; i < loginsPerMinute; i++ {
		loginAs(t, srv, readTok)
	}
	if resp, _ := request(t, srv, "POST", "/api/v1/session", "", "", "application/json", `{"token":"`+readTok+`"}`); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("login %d of a token in a minute: %d", loginsPerMinute+1, resp.StatusCode)
	}
	// Per client: failures beyond the free ones are refused, even with the
	// right token, until the back-off passes.
	clock.add(time.Minute)
	for i := 0; i < freeFailures+1; i++ {
		if resp, _ := request(t, srv, "POST", "/api/v1/session", "", "", "application/json", `{"token":"guess-0123456789abcdef"}`); resp.StatusCode != 401 {
			t.Fatalf("guess %d: %d", i, resp.StatusCode)
		}
	}
	resp, _ := request(t, srv, "POST", "/api/v1/session", "", "", "application/json", `{"token":"`+opTok+`"}`)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a login during the back-off: %d %v", resp.StatusCode, resp.Header)
	}
	clock.add(2 * time.Second)
	loginAs(t, srv, opTok)
	// The cookie's name carries the port.
	u := strings.TrimPrefix(srv.URL, "http://")
	if _, port, _ := strings.Cut(u, ":"); cookieName(&http.Request{Host: u}) != SessionCookie+"_"+port {
		t.Fatalf("cookie name %q", cookieName(&http.Request{Host: u}))
	}
}

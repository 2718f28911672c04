package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/app"
	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/api"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

const apiToken = "op-token-0123456789abcdef"

// apiCall sends one request to the app's API as the operator token.
func apiCall(t *testing.T, a *app.App, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+a.HTTPAddr()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A partner whose interchanges keep failing is paused by the bulkhead;
// partner paused lists it, partner resume (audited) lets it run again.
func TestPartnerPausedAndResume(t *testing.T) {
	validate := hub.Stage{Name: "validate", Handle: func(ctx context.Context, m *hub.Message) error {
		if strings.HasPrefix(string(m.Data), "BAD") {
			return hub.PermanentError(wire.CauseBusiness, errors.New("unknown article 4711"))
		}
		return nil
	}}
	a := startApp(t, func(c *app.Config) {
		c.Hub.Partitions = 1
		c.Hub.Attempts.AckWait = time.Second
		c.Hub.DuplicateWindow = time.Minute
		c.Hub.Bulkhead = hub.BulkheadConfig{Enabled: true, Window: time.Minute, MinMessages: 2, MaxFailures: 2}
		c.API.Tokens = []api.TokenConfig{{Name: "oncall", Token: apiToken, Role: api.RoleOperator}}
	}, &app.Env{Stages: []hub.Stage{validate}})
	_, j := jetstreamtest.Connect(t, a.NATSURL())
	d := &dlqHub{url: a.NATSURL(), js: j}

	out, _, code := d.cmd(t, "partner", "paused")
	if code != 0 || !strings.Contains(out, "no partner is paused") {
		t.Fatalf("paused before any failure: code %d %q", code, out)
	}
	d.publish(t, "BADCO", "BAD1")
	d.publish(t, "BADCO", "BAD2")
	var doc struct {
		Paused []hub.Pause `json:"paused"`
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		out, _, code = d.cmd(t, "partner", "paused", "--json")
		doc.Paused = nil
		return code == 0 && json.Unmarshal([]byte(out), &doc) == nil && len(doc.Paused) == 1
	}, "BADCO is never listed as paused")
	if p := doc.Paused[0]; p.Partner != "BADCO" || p.Failures != 2 {
		t.Fatalf("paused %+v", p)
	}
	out, _, _ = d.cmd(t, "partner", "paused")
	if !strings.Contains(out, "BADCO") || !strings.Contains(out, "2 of 2") {
		t.Fatalf("paused table: %q", out)
	}

	// send, for a paused partner, says why its file gets no verdict.
	file := filepath.Join(t.TempDir(), "good.edi")
	if err := os.WriteFile(file, []byte("GOOD1"), 0o600); err != nil {
		t.Fatal(err)
	}
	var sendOut, sendErr bytes.Buffer
	code = run(context.Background(), &env{stdin: strings.NewReader(""), stdout: &sendOut, stderr: &sendErr, getenv: func(string) string { return "" }},
		[]string{"send", "--server", d.url, "--partner", "BADCO", "--outcome", "1s", file})
	out, errOut := sendOut.String(), sendErr.String()
	if code != 0 || !strings.Contains(out, "no verdict yet") || !strings.Contains(out, "partner BADCO is paused by the bulkhead") ||
		!strings.Contains(out, "edihub partner resume BADCO --reason") {
		t.Fatalf("send to a paused partner: code %d %q %q", code, out, errOut)
	}

	if _, errOut, code := d.cmd(t, "partner", "resume", "BADCO"); code != exitUsage || !strings.Contains(errOut, "--reason") {
		t.Fatalf("resume without a reason: code %d %q", code, errOut)
	}
	out, errOut, code = d.cmd(t, "partner", "resume", "BADCO", "--reason", "partner fixed its article master")
	if code != 0 || !strings.Contains(out, "BADCO resumed") {
		t.Fatalf("resume: code %d %q %q", code, out, errOut)
	}
	if _, errOut, code := d.cmd(t, "partner", "resume", "BADCO", "--reason", "again"); code != exitFailed || !strings.Contains(errOut, "not paused") {
		t.Fatalf("second resume: code %d %q", code, errOut)
	}
	out, _, _ = d.cmd(t, "partner", "paused")
	if !strings.Contains(out, "no partner is paused") {
		t.Fatalf("after resume: %q", out)
	}
	recs, err := audit.Read(context.Background(), j, "AUDIT", time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var paused, resumed bool
	for _, r := range recs {
		switch r.Event.Action {
		case "partner-paused":
			paused = len(r.Event.IDs) == 1 && r.Event.IDs[0] == "BADCO"
		case "partner-resumed":
			resumed = r.Event.Actor != "" && r.Event.Reason == "partner fixed its article master"
		}
	}
	if !paused || !resumed {
		t.Fatalf("audit trail: paused %v resumed %v in %d records", paused, resumed, len(recs))
	}

	// Resumed, it starts afresh: two new failures pause it again; the API
	// lists and resumes it as the CLI does.
	d.publish(t, "BADCO", "BAD3")
	d.publish(t, "BADCO", "BAD4")
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		code, body := apiCall(t, a, "GET", "/api/v1/partners/paused", "")
		return code == http.StatusOK && strings.Contains(body, `"partner":"BADCO"`)
	}, "the API never lists BADCO as paused again")
	if code, body := apiCall(t, a, "POST", "/api/v1/partners/BADCO/resume", `{}`); code != http.StatusBadRequest {
		t.Fatalf("API resume without a reason: %d %s", code, body)
	}
	if code, body := apiCall(t, a, "POST", "/api/v1/partners/BADCO/resume", `{"reason":"fixed again"}`); code != http.StatusOK || !strings.Contains(body, `"resumed"`) {
		t.Fatalf("API resume: %d %s", code, body)
	}
	if code, body := apiCall(t, a, "POST", "/api/v1/partners/BADCO/resume", `{"reason":"fixed again"}`); code != http.StatusNotFound {
		t.Fatalf("API resume of a partner not paused: %d %s", code, body)
	}
	if code, body := apiCall(t, a, "GET", "/api/v1/partners/paused", ""); code != http.StatusOK || strings.Contains(body, "BADCO") {
		t.Fatalf("API paused after resume: %d %s", code, body)
	}
}

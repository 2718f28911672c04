package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/app"
	"github.com/edihub/edihub/app/apptest"
	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub/api"
	"github.com/edihub/edihub/hub/forensics"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// startApp runs the application in-process (apptest.Run), its audit
// events and copies signed with testAuditKey.
func startApp(t *testing.T, mod func(*app.Config), env *app.Env) *app.App {
	t.Helper()
	var e app.Env
	if env != nil {
		e = *env
	}
	if e.Getenv == nil {
		e.Getenv = func(k string) string { return map[string]string{audit.KeyEnv: testAuditKey}[k] }
	}
	return apptest.Run(t, mod, &e)
}

// The application in-process, as serve runs it: an interchange published
// to ingest comes out parsed, /readyz says ready on the HTTP port Run
// serves, and a quarantined message replayed through the API is noted on
// its forensic ticket as `dlq replay` notes it (one OpenOps for both).
func TestAppServesAndAPIReplayNotesPoisonTicket(t *testing.T) {
	const token = "op-token-0123456789abcdef"
	a := startApp(t, func(c *app.Config) {
		c.API.Tokens = []api.TokenConfig{{Name: "oncall", Token: token, Role: api.RoleOperator}}
	}, nil)
	nc, j := jetstreamtest.Connect(t, a.NATSURL())
	ctx := context.Background()
	resp, err := http.Get("http://" + a.HTTPAddr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %s", resp.Status)
	}
	if _, err := j.Publish(ctx, wire.IngestSubject("ACME"), []byte(edifacttest.Invoice("A1"))); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		s, err := j.Stream(ctx, a.Config().Hub.Streams.Parsed)
		if err != nil {
			return false
		}
		info, err := s.Info(ctx)
		return err == nil && info.State.Msgs == 1
	}, "the interchange was not parsed")

	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer runForensics(t, fctx, cancel, nc)()
	publishPoison(t, ctx, j, "9", "panic", []byte(edifacttest.Invoice("P1")))
	poisonList := func() []forensics.PoisonEntry {
		store, err := forensics.OpenStore(ctx, j, a.Config().Sandbox, false) // afresh: the worker creates the buckets
		if err != nil {
			return nil
		}
		list, _ := store.List(ctx)
		return list
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		list := poisonList()
		return len(list) == 1 && list[0].Ticket != ""
	}, "no forensic ticket")

	body := `{"allow_poison":true,"to":"` + wire.IngestSubject("ACME") + `","reason":"partner fixed it"}`
	req := httptest.NewRequest("POST", "/api/v1/dlq/POISON:1/replay", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "INGEST:") {
		t.Fatalf("API replay: %d %s", rec.Code, rec.Body.String())
	}
	if list := poisonList(); len(list) != 1 || !strings.HasPrefix(list[0].ReplayedAs, "INGEST:") {
		t.Fatalf("the ticket does not say where the API replayed it: %+v", list)
	}
}

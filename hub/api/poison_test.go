package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub/forensics"
)

// A stored report and ticket (as the forensic worker leaves them) are
// shown and the ticket moves on with a note, audited under the token.
func TestPoisonReportAndTicket(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	cfg := forensics.Config{}
	if _, err := forensics.OpenStore(ctx, e.JS, cfg, true); err != nil { // the worker's buckets
		t.Fatal(err)
	}
	cfg.SetDefaults()
	obj, err := e.JS.ObjectStore(ctx, cfg.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := e.JS.KeyValue(ctx, cfg.TicketBucket)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := json.Marshal(forensics.Report{Version: 1, ID: "POISON:1", Key: "INGEST/7", Ticket: "T-INGEST-7", Verdict: "the parser panics on this payload", Partner: "ACME", Stage: "parse"})
	if _, err := obj.PutBytes(ctx, forensics.ReportObject("INGEST/7"), rep); err != nil {
		t.Fatal(err)
	}
	tk, _ := json.Marshal(forensics.Ticket{ID: "T-INGEST-7", State: forensics.TicketOpen, PoisonID: "POISON:1", ReportKey: "INGEST/7", Partner: "ACME", Stage: "parse", Cause: "panic"})
	if _, err := kv.Put(ctx, "T-INGEST-7", tk); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewWithOptions(Options{Ops: e.ops, Logger: zerolog.Nop(), JS: e.JS, Forensics: &forensics.Config{},
		Auditor: audit.New(e.JS, "AUDIT"),
		Tokens:  []Token{{Name: "console-ro", Token: readTok, Role: RoleRead}, {Name: "bob", Token: opTok, Role: RoleOperator}}}))
	t.Cleanup(srv.Close)

	code, out := call(t, srv, "GET", "/api/v1/poison/T-INGEST-7", readTok, "")
	if code != 200 || out["report"].(map[string]any)["verdict"] != "the parser panics on this payload" || out["ticket"].(map[string]any)["state"] != "open" {
		t.Fatalf("poison show: %d %v", code, out)
	}
	if code, _ := call(t, srv, "GET", "/api/v1/poison/T-NOPE", readTok, ""); code != 404 {
		t.Fatalf("unknown ticket: %d", code)
	}
	if code, _ := call(t, srv, "POST", "/api/v1/poison/T-INGEST-7/ticket/ack", readTok, `{"note":"x"}`); code != 403 {
		t.Fatalf("ack with a read token: %d", code)
	}
	if code, _ := call(t, srv, "POST", "/api/v1/poison/T-INGEST-7/ticket/ack", opTok, `{"note":"  "}`); code != 400 {
		t.Fatalf("ack without a note: %d", code)
	}
	if code, out := call(t, srv, "POST", "/api/v1/poison/T-INGEST-7/ticket/ack", opTok, `{"note":"looking at it"}`); code != 200 || out["state"] != "acked" {
		t.Fatalf("ack: %d %v", code, out)
	}
	if ev := lastAudit(t, e.JS); ev.Action != "ticket-ack" || ev.Actor != "bob" || ev.Reason != "looking at it" {
		t.Fatalf("ack audited as %+v", ev)
	}
	if code, _ := call(t, srv, "POST", "/api/v1/poison/T-INGEST-7/ticket/ack", opTok, `{"note":"again"}`); code != 409 {
		t.Fatalf("second ack: %d, want 409", code)
	}
	if code, out := call(t, srv, "POST", "/api/v1/poison/T-INGEST-7/ticket/close", opTok, `{"note":"partner fixed it"}`); code != 200 || out["state"] != "closed" {
		t.Fatalf("close: %d %v", code, out)
	}
}

package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/edihub/edihub/edifact/edifacttest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub/forensics"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

// storePoison puts a quarantined message with the report and ticket the
// forensic worker would have stored for it.
func storePoison(t *testing.T, e *env) string {
	t.Helper()
	ctx := context.Background()
	h := nats.Header{}
	h.Set(wire.HdrPartnerID, "ACME")
	h.Set(wire.HdrStage, "parse")
	h.Set(wire.HdrPoisonCause, "panic")
	h.Set(wire.HdrOriginalStream, "INGEST")
	h.Set(wire.HdrOriginalSeq, "7")
	h.Set(wire.HdrOriginalTopic, wire.IngestSubject("ACME"))
	payload := []byte(edifacttest.Invoice("CRASH1"))
	audit.SignCopy(e.keys, h, payload)
	ack, err := e.JS.PublishMsg(ctx, &nats.Msg{Subject: wire.PoisonSubject("parse"), Header: h, Data: payload})
	if err != nil {
		t.Fatal(err)
	}
	cfg := forensics.Config{}
	if _, err := forensics.OpenStore(ctx, e.JS, cfg, true); err != nil {
		t.Fatal(err)
	}
	cfg.SetDefaults()
	obj, err := e.JS.ObjectStore(ctx, cfg.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := json.Marshal(forensics.Report{Version: 1, ID: wire.PoisonID(ack.Sequence), Key: "INGEST/7", Ticket: "T-INGEST-7",
		Verdict: "reproduced: the parse stage panics on this payload", Partner: "ACME", Stage: "parse", PoisonCause: "panic",
		Headers: map[string][]string{wire.HdrStage: {"parse"}},
		Sandbox: &sandbox.Report{Outcome: sandbox.OutcomePanic, PanicValue: "index out of range [3] with length 3", ExitCode: 11,
			Limits: sandbox.Limits{MemoryBytes: 256 << 20, CPUSeconds: 30, AppliedBy: "child+parent"},
			Stack:  "goroutine 1 [running]:\nedifact.(*Reader).Read()\n\t/src/edifact/reader.go:120 +0x1d\n"}})
	meta := js.ObjectMeta{Name: forensics.ReportObject("INGEST/7"), Metadata: map[string]string{"poison-seq": strconv.FormatUint(ack.Sequence, 10)}}
	if _, err := obj.Put(ctx, meta, bytes.NewReader(rep)); err != nil {
		t.Fatal(err)
	}
	kv, err := e.JS.KeyValue(ctx, cfg.TicketBucket)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := json.Marshal(forensics.Ticket{ID: "T-INGEST-7", State: forensics.TicketOpen, PoisonID: wire.PoisonID(ack.Sequence),
		ReportKey: "INGEST/7", Partner: "ACME", Stage: "parse", Cause: "panic", Notes: []forensics.TicketNote{{Actor: "edihub-sandbox", Action: "open"}}})
	if _, err := kv.Put(ctx, "T-INGEST-7", tk); err != nil {
		t.Fatal(err)
	}
	return wire.PoisonID(ack.Sequence)
}

// A quarantined message shows its forensic report and ticket; the
// operator acknowledges and closes the ticket with notes, audited.
func TestConsolePoisonTicket(t *testing.T) {
	ctx := newTab(t)
	e := newEnv(t)
	id := storePoison(t, e)
	login(t, ctx, e.srv.URL, opTok)
	waitFor(t, ctx, `!!document.querySelector('#view[data-ready=overview]')`)
	if got := eval[string](t, ctx, `document.querySelector('.card.poison .n').textContent`); got != "1" {
		t.Fatalf("POISON count %q", got)
	}
	page(t, ctx, "#/message/"+id, "message")
	waitFor(t, ctx, `!!document.querySelector('#ticket-state')`)
	// The report reads as fields, the verdict first, the stack as lines
	// (never \n or \t), all of it above the payload and the headers.
	fields := eval[[]string](t, ctx, `[...document.querySelectorAll('#report-fields dd')].map(d => d.dataset.field + "=" + d.textContent)`)
	if len(fields) < 6 || fields[0] != "verdict=reproduced: the parse stage panics on this payload" || !slices.Contains(fields, "signal=none") ||
		!slices.Contains(fields, "panic=index out of range [3] with length 3") || !slices.Contains(fields, "limits=memory 256 MiB over a 0 MiB start-up, cpu 30s, applied by child+parent") {
		t.Fatalf("report fields: %q", fields)
	}
	if st := eval[string](t, ctx, `document.querySelector('#report-stack').textContent`); st != "goroutine 1 [running]:\nedifact.(*Reader).Read()\n\t/src/edifact/reader.go:120 +0x1d" {
		t.Fatalf("stack: %q", st)
	}
	if above := eval[bool](t, ctx, `(r => [...document.querySelectorAll('#segments, #view h2')].filter(x => x.id === "segments" || x.textContent === "Headers").every(x => r.compareDocumentPosition(x) & Node.DOCUMENT_POSITION_FOLLOWING))(document.querySelector('#report'))`); !above {
		t.Fatal("the forensic report is not above the payload and the headers")
	}
	screenshot(t, ctx, "poison")
	for _, step := range []struct{ button, note, state string }{
		{"ticket-ack", "looking at it", "acked"},
		{"ticket-close", "partner fixed their generator", "closed"},
	} {
		do(t, ctx, step.button, chromedp.Click(chromedp.ID(step.button)), chromedp.WaitVisible(chromedp.ID("ask-note")),
			chromedp.SendKeys(chromedp.ID("ask-note"), step.note), chromedp.Click(chromedp.ID("ask-ok")))
		waitFor(t, ctx, `(document.querySelector('#ticket-state') || {}).textContent === "`+step.state+`"`)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#ticket-ack, #ticket-close').length`); n != 0 {
		t.Fatalf("a closed ticket still offers %d buttons", n)
	}
	page(t, ctx, "#/audit?action=ticket-close", "audit")
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('tr.audit-row')].map(r => r.textContent)`)
	if len(rows) != 1 || !strings.Contains(rows[0], "alice") || !strings.Contains(rows[0], "partner fixed their generator") {
		t.Fatalf("audit rows for ticket-close: %q", rows)
	}
}

package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/edihub/edihub/hub"
)

// The bulkhead's pauses in the console: a viewer sees who is paused and
// why, an operator resumes one with a reason (through the API's route,
// audited under the operator's name), and the other pause stays. A
// partner ID that is markup and a bidi override shows as characters.
func TestConsolePausedPartnersResume(t *testing.T) {
	ctx := newTab(t)
	e := newEnv(t)
	bg := context.Background()
	store, err := hub.OpenPauses(bg, e.JS, hub.DefaultPauseBucket, 1)
	if err != nil {
		t.Fatal(err)
	}
	const hostileID = "<img src=x onerror=window.__pwned=1>\u202eEXE"
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	for i, p := range []hub.Pause{
		{Partner: "ACME", At: at, By: "hub-1", Failures: 14, Messages: 20, Window: "5m0s"},
		{Partner: hostileID, At: at.Add(time.Minute), By: "hub-2", Failures: 20, Messages: 20, Window: "5m0s"},
	} {
		if created, err := store.Put(bg, p); err != nil || !created {
			t.Fatalf("pause %d: %v %v", i, created, err)
		}
	}

	login(t, ctx, e.srv.URL, readTok)
	page(t, ctx, "#/partners", "partners")
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('tr.paused-row')].map(r => r.dataset.partner + "|" + r.textContent)`)
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "ACME|ACME") || !strings.Contains(rows[0], "14 of 20") || !strings.Contains(rows[0], "hub-1") {
		t.Fatalf("paused rows %q", rows)
	}
	if !strings.Contains(rows[1], `<img src=x onerror=window.__pwned=1>\xE2\x80\xAEEXE`) {
		t.Fatalf("hostile partner not shown as escaped characters: %q", rows[1])
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('button.resume').length`); n != 0 {
		t.Fatalf("a viewer is offered %d resume buttons", n)
	}

	ctx = newTab(t)
	login(t, ctx, e.srv.URL, opTok)
	page(t, ctx, "#/partners", "partners")
	screenshot(t, ctx, "partners")
	do(t, ctx, "resume ACME", chromedp.Click(`button.resume[data-partner="ACME"]`), chromedp.WaitVisible(chromedp.ID("ask-reason")),
		chromedp.SendKeys(chromedp.ID("ask-reason"), "ACME fixed its article master"), chromedp.Click(chromedp.ID("ask-ok")))
	waitFor(t, ctx, `document.querySelector('#view').dataset.ready === "partners" && document.querySelectorAll('tr.paused-row').length === 1`)
	if left := eval[string](t, ctx, `document.querySelector('tr.paused-row').dataset.partner`); left != hostileID {
		t.Fatalf("left paused %q, want the other partner", left)
	}
	if pwned := eval[bool](t, ctx, `window.__pwned !== undefined`); pwned {
		t.Fatal("a partner ID ran as markup")
	}
	ps, err := store.List(bg)
	if err != nil || len(ps) != 1 || ps[0].Partner != hostileID {
		t.Fatalf("pauses in the bucket after resume: %+v %v", ps, err)
	}
	page(t, ctx, "#/audit?action=partner-resumed", "audit")
	audit := eval[[]string](t, ctx, `[...document.querySelectorAll('tr.audit-row')].map(r => r.textContent)`)
	if len(audit) != 1 || !strings.Contains(audit[0], "alice") || !strings.Contains(audit[0], "ACME fixed its article master") || !strings.Contains(audit[0], "ACME") {
		t.Fatalf("audit rows for partner-resumed: %q", audit)
	}
}

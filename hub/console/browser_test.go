package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/edihub/edihub/edifact/edifacttest"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// hostile is a payload that would run script if the console ever put a
// payload into the page as markup, and would recolour or reorder a
// terminal if shown raw.
const hostile = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">" +
	"\x1b[31mRED\x1b[0m \u202eexe.txt'"

// publishDeadLetters stores n dead letters straight into the DLQ stream
// with the hub's headers (as the hub writes them, signed with keys when
// given), pipelined: filling 100 000 takes seconds, not a pass through
// the pipeline.
func publishDeadLetters(tb testing.TB, j js.JetStream, keys *audit.Keyring, n int, cause, partner string) {
	tb.Helper()
	const batch = 2000
	for start := 0; start < n; start += batch {
		var msgs []*nats.Msg
		for i := start; i < min(n, start+batch); i++ {
			h := nats.Header{}
			h.Set(wire.HdrPartnerID, partner)
			h.Set(wire.HdrStage, "parse")
			h.Set(wire.HdrErrorCause, cause)
			h.Set(wire.HdrErrorClass, "edifact.Error")
			data := []byte(edifacttest.Invoice(fmt.Sprintf("%s%d", partner, i)))
			// As the edifact package words it: the quoted message
			// reference differs, so the fingerprints do (i%3), but the
			// group (stage, cause, code 29, UNT) is one.
			h.Set(wire.HdrErrorMsg, fmt.Sprintf(`schema: segment 4 UNT at line 1 col %d (offset %d) element 1: UNT count 3 but message "%d" has %d segments (code 29)`,
				bytes.Index(data, []byte("UNT"))+1, bytes.Index(data, []byte("UNT")), i, 4+i%3))
			h.Set(wire.HdrFingerprint, fmt.Sprintf("fp-%s-%d", cause, i%3))
			h.Set(wire.HdrOriginalTopic, wire.IngestSubject(partner))
			h.Set(wire.HdrOriginalStream, "INGEST")
			h.Set(wire.HdrOriginalSeq, fmt.Sprint(1_000_000+i))
			audit.SignCopy(keys, h, data)
			msgs = append(msgs, &nats.Msg{Subject: wire.DLQSubject("parse", cause), Header: h, Data: data})
		}
		if _, err := ejs.PublishAll(context.Background(), j, msgs, func(i int) string { return fmt.Sprintf("fill:%s:%s:%d", cause, partner, start+i) }); err != nil {
			tb.Fatalf("fill the DLQ: %v", err)
		}
	}
}

// viewReady holds when the view of the current #fragment has loaded.
const viewReady = `(v => v !== null && v.dataset.hash === location.hash && !!v.dataset.ready)(document.querySelector('#view'))`

func jsonOf(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The operator's night: log in, look, filter, open a hostile dead letter
// (nothing runs, everything shows escaped), edit it with a diff, replay
// it, see it leave the list and the audit entry appear; CSRF refused.
func TestConsoleOperatorTriage(t *testing.T) {
	ctx := newTab(t)
	e := newEnv(t)
	e.deadLetter(t, "ACME", hostile)
	e.deadLetter(t, "GLOBEX", "junk from globex")
	publishDeadLetters(t, e.JS, e.keys, 12, "business", "ACME")
	publishDeadLetters(t, e.JS, e.keys, 5, "partner-rejected", "INITECH")
	hostileID := "DLQ:1"

	login(t, ctx, e.srv.URL, opTok)
	if role := eval[string](t, ctx, `document.querySelector('#whoami').dataset.role`); role != "operator" {
		t.Fatalf("logged in as %q", role)
	}
	waitFor(t, ctx, `!!document.querySelector('#view[data-ready=overview]')`)
	if got := eval[string](t, ctx, `document.querySelector('.card.dlq .n').textContent`); got != "19" {
		t.Fatalf("overview DLQ count %q, want 19", got)
	}
	if bars := eval[int](t, ctx, `document.querySelectorAll('#chart rect').length`); bars < 3 {
		t.Fatalf("chart has %d bars, want one per cause in this hour", bars)
	}
	screenshot(t, ctx, "overview")

	// Filter by partner, then by cause, with the page's own selects.
	page(t, ctx, "#/messages", "messages")
	choose := func(sel, v string) {
		eval[bool](t, ctx, fmt.Sprintf(`(s => { s.value = %q; s.dispatchEvent(new Event("change")); return true })(document.querySelector(%q))`, v, sel))
	}
	choose("#f-partner", "ACME")
	waitFor(t, ctx, `location.hash.includes("partner=ACME") && `+viewReady)
	choose("#f-cause", "schema")
	waitFor(t, ctx, `location.hash.includes("cause=schema") && location.hash.includes("partner=ACME") && `+viewReady)
	ids := eval[[]string](t, ctx, `[...document.querySelectorAll('tr[data-id]')].map(r => r.dataset.id)`)
	if len(ids) != 1 || ids[0] != hostileID {
		t.Fatalf("partner=ACME cause=schema lists %v, want [%s]", ids, hostileID)
	}

	page(t, ctx, "#/groups", "groups")
	if n := eval[int](t, ctx, `document.querySelectorAll('.group .replay-group').length`); n == 0 {
		t.Fatal("an operator sees no group actions")
	}
	do(t, ctx, "dry-run a group", chromedp.Click(chromedp.CSS(".group .dry-run")))
	waitFor(t, ctx, `!!document.querySelector('#replay-report')`)

	// The failing segment and element are marked.
	page(t, ctx, "#/message/DLQ:3", "message")
	if seg := eval[string](t, ctx, `document.querySelector('#failing-segment').dataset.n + " " + document.querySelector('#failing-element').textContent`); seg != "4 3" {
		t.Fatalf("failing segment and element: %q, want segment 4, element 1 (3) of UNT+3+1'", seg)
	}

	// The hostile message: nothing executes, everything shows escaped.
	page(t, ctx, "#/message/"+hostileID, "message")
	text := eval[string](t, ctx, `document.querySelector('#view').textContent`)
	if pwned := eval[string](t, ctx, `typeof window.__pwned`); pwned != "undefined" {
		t.Fatalf("the payload ran script in the console: window.__pwned is %s", pwned)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#view script, #view img, #view [onerror]').length`); n != 0 {
		t.Fatalf("%d elements from the payload became markup", n)
	}
	for _, want := range []string{"<script>window.__pwned=1</script>", `\x1B[31mRED`, `\xE2\x80\xAEexe.txt`} {
		if !strings.Contains(text, want) {
			t.Fatalf("message page does not show %q; page text:\n%s", want, text)
		}
	}
	for _, raw := range []string{"\x1b", "\u202e"} {
		if strings.Contains(text, raw) {
			t.Fatalf("message page shows %q raw", raw)
		}
	}
	screenshot(t, ctx, "message")

	// CSRF: the session cookie alone does not make a write.
	for _, hdr := range []string{`{}`, `{"X-CSRF-Token": "forged"}`} {
		st := eval[int](t, ctx, fmt.Sprintf(`fetch("/api/v1/dlq/DLQ:2/park", {method: "POST", headers: Object.assign({"Content-Type": "application/json"}, %s), body: '{"reason":"x"}'}).then(r => r.status)`, hdr))
		if st != 403 {
			t.Fatalf("park with session cookie and CSRF header %s: %d, want 403", hdr, st)
		}
	}

	// Edit in the browser: diff first, then save; the original is kept.
	do(t, ctx, "open the editor", chromedp.Click(chromedp.ID("edit")))
	waitFor(t, ctx, `!!document.querySelector('#edit-text')`)
	eval[bool](t, ctx, fmt.Sprintf(`(a => { a.value = %q; a.dispatchEvent(new Event("input")); return true })(document.querySelector('#edit-text'))`, edifacttest.Invoice("FIXED1")))
	if eval[bool](t, ctx, `document.querySelector('#edit-save').disabled`) != true {
		t.Fatal("save is possible before the diff was shown")
	}
	do(t, ctx, "show the diff", chromedp.SendKeys(chromedp.ID("edit-reason"), "partner sent HTML; rebuilt from their portal"),
		chromedp.Click(chromedp.ID("edit-preview")))
	waitFor(t, ctx, `document.querySelectorAll('#edit-diff tr.add').length > 0 && document.querySelectorAll('#edit-diff tr.del').length > 0`)
	if d := eval[string](t, ctx, `document.querySelector('#edit-diff').textContent`); !strings.Contains(d, "BGM+380+FIXED1+9'") || !strings.Contains(d, `\xE2\x80\xAE`) {
		t.Fatalf("diff does not show both versions (escaped): %s", d)
	}
	do(t, ctx, "save the edit", chromedp.Click(chromedp.ID("edit-save")))
	waitFor(t, ctx, `decodeURIComponent(location.hash).startsWith("#/message/DLQ:") && decodeURIComponent(location.hash) !== "#/message/`+hostileID+`" && `+viewReady)
	editedID := strings.TrimPrefix(eval[string](t, ctx, `decodeURIComponent(location.hash)`), "#/message/")
	if got := eval[string](t, ctx, `document.querySelector('[data-fact="edited from"]').textContent`); got != hostileID {
		t.Fatalf("edited copy says edited from %q", got)
	}

	// Replay the edit.
	do(t, ctx, "replay", chromedp.Click(chromedp.ID("replay")), chromedp.WaitVisible(chromedp.ID("ask-reason")),
		chromedp.SendKeys(chromedp.ID("ask-reason"), "fixed payload"), chromedp.Click(chromedp.ID("ask-ok")))
	waitFor(t, ctx, `!!document.querySelector('#replay-report')`)
	if rep := eval[string](t, ctx, `document.querySelector('#replay-report h2').textContent`); !strings.Contains(rep, "1 replayed") {
		t.Fatalf("replay report: %s", rep)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "PARSED") == 1 })

	// It left the list: neither the original nor its edit is there.
	page(t, ctx, "#/messages?partner=ACME", "messages")
	ids = eval[[]string](t, ctx, `[...document.querySelectorAll('tr[data-id]')].map(r => r.dataset.id)`)
	for _, id := range ids {
		if id == hostileID || id == editedID {
			t.Fatalf("%s still listed after the replay: %v", id, ids)
		}
	}
	if len(ids) != 12 {
		t.Fatalf("ACME lists %d messages, want the 12 business ones", len(ids))
	}

	// The audit trail names the replay, by alice, and the chain verifies.
	page(t, ctx, "#/audit?action=replay", "audit")
	waitFor(t, ctx, `document.querySelector('#verify').dataset.ok !== undefined`)
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('tr.audit-row')].map(r => r.textContent)`)
	if len(rows) != 1 || !strings.Contains(rows[0], "alice") || !strings.Contains(rows[0], editedID) {
		t.Fatalf("audit rows for replay: %q", rows)
	}
	if v := eval[string](t, ctx, `document.querySelector('#verify').textContent`); !strings.Contains(v, "Chain intact") || strings.Contains(v, "null") || strings.Contains(v, "[object") {
		t.Fatalf("audit chain status reads %q", v)
	}
	if ok := eval[string](t, ctx, `document.querySelector('#verify').dataset.ok`); ok != "true" {
		t.Fatalf("audit chain status: %s", eval[string](t, ctx, `document.querySelector('#verify').textContent`))
	}
	page(t, ctx, "#/audit", "audit")
	waitFor(t, ctx, `document.querySelector('#verify').dataset.ok !== undefined`)
	screenshot(t, ctx, "audit")

	// Logging out ends the session on the server too.
	do(t, ctx, "log out", chromedp.Click(chromedp.ID("logout")))
	waitFor(t, ctx, `!!document.querySelector('#login')`)
	if st := eval[int](t, ctx, `fetch("/api/v1/dlq").then(r => r.status)`); st != 401 {
		t.Fatalf("API after logout: %d, want 401", st)
	}
}

// A read token sees no action buttons, and the API refuses its writes
// even with a valid CSRF token. The console's escaping is the CLI's.
func TestConsoleReadRole(t *testing.T) {
	ctx := newTab(t)
	e := newEnv(t)
	e.deadLetter(t, "ACME", "junk one")
	login(t, ctx, e.srv.URL, readTok)
	waitFor(t, ctx, `!!document.querySelector('#view[data-ready=overview]')`)
	before := jetstreamtest.StreamStates(t, e.JS, "DLQ", "PARKING", "INGEST")

	page(t, ctx, "#/groups", "groups")
	if n := eval[int](t, ctx, `document.querySelectorAll('.replay-group, .park-group, .drop-group').length`); n != 0 {
		t.Fatalf("a read token sees %d group action buttons", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.dry-run').length`); n == 0 {
		t.Fatal("a read token may preview (dry-run) but sees no button")
	}
	page(t, ctx, "#/message/DLQ:1", "message")
	if n := eval[int](t, ctx, `document.querySelectorAll('#replay, #edit, #park, #drop, #ticket-ack, #ticket-close').length`); n != 0 {
		t.Fatalf("a read token sees %d message action buttons", n)
	}
	for _, c := range []struct{ path, body string }{
		{"/api/v1/dlq/DLQ:1/drop", `{"reason":"forged"}`},
		{"/api/v1/dlq/DLQ:1/replay", `{"reason":"forged"}`},
		{"/api/v1/dlq/DLQ:1/edit", `{"payload":"eA=="}`},
		{"/api/v1/dlq/park", `{"reason":"forged","ids":["DLQ:1"]}`},
		{"/api/v1/dlq/replay", `{"ids":["DLQ:1"]}`},
	} {
		st := eval[int](t, ctx, fmt.Sprintf(`fetch("/api/v1/session").then(r => r.json()).then(s => fetch(%q, {method: "POST",
			headers: {"Content-Type": "application/json", "X-CSRF-Token": s.csrf}, body: %q})).then(r => r.status)`, c.path, c.body))
		if st != 403 {
			t.Fatalf("forged POST %s with a read session: %d, want 403", c.path, st)
		}
	}
	if after := jetstreamtest.StreamStates(t, e.JS, "DLQ", "PARKING", "INGEST"); !maps.Equal(before, after) {
		t.Fatalf("refused writes changed something: %v → %v", before, after)
	}

	// esc.js shows what escape.Text shows.
	cases := []string{"plain ASCII", `back\slash`, "\x1b[31mred\x1b[0m", "\u202eevil", "a\nb\r\tc", "\x00\x7f",
		"é", "\u009b2J", "😀", "\u2028", "<img src=x>", "BÜTTNER — ok", `stored \x00 escaped once`, "\u2066x\u2069\u061c"}
	got := eval[[]string](t, ctx, fmt.Sprintf(`import("/console/js/esc.js").then(m => %s.map(m.esc))`, jsonOf(t, cases)))
	for i, c := range cases {
		if want := escape.Text(c); got[i] != want {
			t.Errorf("esc(%q) = %q, escape.Text gives %q", c, got[i], want)
		}
	}
}

package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub/ops"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// publishGroup stores one dead letter per payload with the same UNT-count
// error (code 29) but for the quoted reference, signed as the hub signs.
func publishGroup(t *testing.T, e *env, payloads ...string) {
	t.Helper()
	var msgs []*nats.Msg
	for i, p := range payloads {
		h := nats.Header{}
		h.Set(wire.HdrPartnerID, "INITECH")
		h.Set(wire.HdrStage, "parse")
		h.Set(wire.HdrErrorCause, "schema")
		h.Set(wire.HdrErrorClass, "permanent")
		h.Set(wire.HdrErrorMsg, fmt.Sprintf(`schema: segment 4 UNT at line 1 col 1 (offset 100) element 1: UNT count 9 but message "G%d" has 3 segments (code 29)`, i))
		h.Set(wire.HdrFingerprint, fmt.Sprintf("fp-g%d", i))
		h.Set(wire.HdrOriginalTopic, wire.IngestSubject("INITECH"))
		h.Set(wire.HdrOriginalStream, "INGEST")
		h.Set(wire.HdrOriginalSeq, fmt.Sprint(2_000_000+i))
		audit.SignCopy(e.keys, h, []byte(p))
		msgs = append(msgs, &nats.Msg{Subject: wire.DLQSubject("parse", "schema"), Header: h, Data: []byte(p)})
	}
	if _, err := ejs.PublishAll(context.Background(), e.JS, msgs, func(i int) string { return fmt.Sprintf("group:%d", i) }); err != nil {
		t.Fatal(err)
	}
}

// Triage at batch size, and a message page that tells the truth: one group
// for errors that differ only in what they quote, all its IDs on request,
// "replay what the dry run says would pass"; the failing segment itself
// marked when the reader never read it; a replay that would fail needs an
// explicit confirmation; an edited original and its edit each show their
// own state.
func TestConsoleTriageBatch(t *testing.T) {
	ctx := newTab(t)
	e := newEnv(t)
	// DLQ:1: a NUL inside BGM; the reader stops before it (never read).
	e.deadLetter(t, "ACME", strings.Replace(edifacttest.Invoice("NUL1"), "BGM+380", "BGM+38\x000", 1))
	publishDeadLetters(t, e.JS, e.keys, 12, "business", "ACME")                                                                                   // DLQ:2..13
	publishGroup(t, e, edifacttest.Invoice("G0"), strings.Replace(edifacttest.Invoice("G1"), "UNT+3+1", "UNT+3+9", 1), edifacttest.Invoice("G2")) // DLQ:14..16
	login(t, ctx, e.srv.URL, opTok)
	waitFor(t, ctx, `!!document.querySelector('#view[data-ready=overview]')`)

	// Twelve business errors, three fingerprints: one group.
	page(t, ctx, "#/groups?cause=business", "groups")
	if got := eval[string](t, ctx, `[...document.querySelectorAll('.group')].map(g => g.querySelector('.group-count').textContent + " " + g.dataset.key + " " + g.querySelectorAll('tr.subgroup').length).join(";")`); got != "12 parse/business/code 29/UNT 3" {
		t.Fatalf("business groups: %q, want one of 12 with 3 fingerprints", got)
	}
	do(t, ctx, "all IDs", chromedp.Click(chromedp.CSS(".group .all-ids")))
	waitFor(t, ctx, `document.querySelectorAll('.group .id-list a').length > 0`)
	if n := eval[int](t, ctx, `document.querySelectorAll('.group .id-list a').length`); n != 12 {
		t.Fatalf("all IDs lists %d, want 12", n)
	}

	// Replay what the dry run says would pass: two of three.
	page(t, ctx, "#/groups?partner=INITECH", "groups")
	do(t, ctx, "replay the group", chromedp.Click(chromedp.CSS(".group .replay-group")))
	waitFor(t, ctx, `!!document.querySelector('#replay-passing')`)
	if h := eval[string](t, ctx, `document.querySelector('#replay-report h2').textContent`); !strings.Contains(h, "1 of 3 would not pass; nothing replayed") {
		t.Fatalf("group replay did not stop at the dry run: %s", h)
	}
	if n := jetstreamtest.CountMsgs(t, e.JS, "DLQ"); n != 16 {
		t.Fatalf("DLQ holds %d before the confirmed replay, want 16", n)
	}
	screenshot(t, ctx, "group")
	do(t, ctx, "replay the passing", chromedp.Click(chromedp.ID("replay-passing")), chromedp.WaitVisible(chromedp.ID("ask-reason")),
		chromedp.SendKeys(chromedp.ID("ask-reason"), "the partner's good ones"), chromedp.Click(chromedp.ID("ask-ok")))
	waitFor(t, ctx, `(document.querySelector('#replay-report h2') || {}).textContent?.startsWith("Replayed: 2 replayed")`)
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "PARSED") == 2 })

	// The failing segment was never read: it is marked in the unread
	// bytes, not the segment before it.
	page(t, ctx, "#/message/DLQ:1", "message")
	if got := eval[string](t, ctx, `(m => m.closest('#rest') ? m.dataset.n + " " + m.textContent : "not in the rest: " + m.textContent)(document.querySelector('#failing-segment'))`); got != `3 BGM+38\x000+NUL1+9'` {
		t.Fatalf("failing segment: %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#segments tr.fail').length`); n != 0 {
		t.Fatalf("%d segments read before the failing one are marked as failing", n)
	}

	// A replay that would fail needs "replay anyway".
	before := jetstreamtest.StreamStates(t, e.JS, "DLQ", "INGEST")
	do(t, ctx, "replay a failing message", chromedp.Click(chromedp.ID("replay")), chromedp.WaitVisible(chromedp.ID("ask-confirm")),
		chromedp.SendKeys(chromedp.ID("ask-reason"), "try"), chromedp.SendKeys(chromedp.ID("ask-confirm"), "yes"), chromedp.Click(chromedp.ID("ask-ok")))
	waitFor(t, ctx, `!!document.querySelector('#not-confirmed')`)
	if after := jetstreamtest.StreamStates(t, e.JS, "DLQ", "INGEST"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("an unconfirmed replay changed the streams: %v → %v", before, after)
	}

	// Edited: the original shows the edit, no error and no actions; the
	// edit shows its own state (a dry run), the original's error apart.
	ed, err := e.ops.Edit(context.Background(), "DLQ:1", []byte(edifacttest.Invoice("NUL1")), "NUL removed")
	if err != nil {
		t.Fatal(err)
	}
	page(t, ctx, "#/messages", "messages") // the same #fragment again would not reload
	page(t, ctx, "#/message/DLQ:1", "message")
	if got := eval[string](t, ctx, `document.querySelector('#edit-state').dataset.state + " " + document.querySelectorAll('#error-msg, #replay, #edit, #park, #drop').length + " " + (document.querySelector('#edit-state a') || {}).textContent`); got != "superseded 0 "+ed.Edited {
		t.Fatalf("edited original: %q", got)
	}
	page(t, ctx, "#/message/"+ed.Edited, "message")
	waitFor(t, ctx, `!!document.querySelector('#edit-verdict')`)
	if got := eval[string](t, ctx, `document.querySelector('#edit-state').dataset.state + " " + document.querySelectorAll('#error-msg').length + " " + !!document.querySelector('#original-error')`); got != "would-replay 0 true" {
		t.Fatalf("edit page: %q (%s)", got, eval[string](t, ctx, `document.querySelector('#edit-state').textContent`))
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#failing-segment, #segments tr.fail').length`); n != 0 {
		t.Fatalf("the edit's page marks %d segments with its original's error", n)
	}
	screenshot(t, ctx, "edit")
	if rep, err := e.ops.Replay(context.Background(), ops.ReplayRequest{IDs: []string{ed.Edited}, Reason: "fixed"}); err != nil || rep.Replayed != 1 {
		t.Fatalf("replay the edit: %v %+v", err, rep)
	}
	page(t, ctx, "#/messages", "messages")
	page(t, ctx, "#/message/DLQ:1", "message")
	if got := eval[string](t, ctx, `document.querySelector('#edit-state').dataset.state + " " + document.querySelectorAll('#edit-state a, [data-fact="superseded by"] a, #replay, #edit, #park').length`); got != "done 0" {
		t.Fatalf("original after its edit was replayed: %q (%s)", got, eval[string](t, ctx, `document.querySelector('#edit-state').textContent`))
	}
	screenshot(t, ctx, "edited-original")
}

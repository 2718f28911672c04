package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/edihub/edihub/edifact/edifacttest"
)

// Replay → outcome → linked dead letter, in the browser: the replay
// report says the copy was dead-lettered again and links the new dead
// letter; the batch page keeps the tally; the new dead letter names the
// message it was replayed from.
func TestConsoleReplayOutcome(t *testing.T) {
	ctx := newTab(t)
	e := newEnv(t)
	e.deadLetter(t, "ACME", edifacttest.BadCount("S:14", "R:14", "RB1"))
	login(t, ctx, e.srv.URL, opTok)
	page(t, ctx, "#/message/DLQ:1", "message")
	// The dry run says it would fail again, so the console asks for
	// "replay anyway" first (TestConsoleTriageBatch refuses a wrong one).
	do(t, ctx, "replay", chromedp.Click(chromedp.ID("replay")), chromedp.WaitVisible(chromedp.ID("ask-confirm")),
		chromedp.SendKeys(chromedp.ID("ask-reason"), "partner says it is fixed"),
		chromedp.SendKeys(chromedp.ID("ask-confirm"), "replay anyway"), chromedp.Click(chromedp.ID("ask-ok")))
	waitFor(t, ctx, `!!document.querySelector('#replay-tally')`)
	if got := eval[string](t, ctx, `document.querySelector('#replay-report [data-outcome]').dataset.outcome`); got != "dead-lettered" {
		t.Fatalf("outcome %q: %s", got, eval[string](t, ctx, `document.querySelector('#replay-report').textContent`))
	}
	if got := eval[string](t, ctx, `document.querySelector('#replay-tally').textContent`); got != "1 dead-lettered again" {
		t.Fatalf("tally %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('#replay-report [data-outcome] a').textContent`); got != "DLQ:2" {
		t.Fatalf("the new dead letter is not linked: %q", got)
	}
	screenshot(t, ctx, "replay")

	// The batch page: listed, with its live tally.
	batch := eval[string](t, ctx, `document.querySelector('#replay-batch a').textContent`)
	page(t, ctx, "#/replays", "replays")
	if rows := eval[[]string](t, ctx, `[...document.querySelectorAll('tr.replay-row')].map(r => r.dataset.id)`); len(rows) != 1 || rows[0] != batch {
		t.Fatalf("replays list %v, want %s", rows, batch)
	}
	page(t, ctx, "#/replay/"+batch, "replay")
	if got := eval[string](t, ctx, `document.querySelector('#batch-tally').textContent`); got != "1 dead-lettered again" {
		t.Fatalf("batch tally %q", got)
	}

	// Follow the link to the new dead letter: it names where it came from.
	do(t, ctx, "open the new dead letter", chromedp.Click(chromedp.CSS(`tr.replay-item [data-outcome] a`)))
	waitFor(t, ctx, `decodeURIComponent(location.hash) === "#/message/DLQ:2" && `+viewReady)
	if text := eval[string](t, ctx, `document.querySelector('#view').textContent`); !strings.Contains(text, "x-replayed-from") || !strings.Contains(text, "DLQ:1") {
		t.Fatalf("the new dead letter does not name DLQ:1:\n%.2000s", text)
	}
}

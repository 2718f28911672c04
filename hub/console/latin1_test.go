package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/edihub/edihub/hub/ops"
)

// latin1Broken is a UNOC (ISO 8859-1) interchange naming BÜTTNER (0xDC),
// dead-lettered for its wrong UNT count.
const latin1Broken = "UNB+UNOC:3+SENDER1:14+RECEIVER1:14+261130:1200+L1'UNH+1+INVOIC:D:96A:UN'" +
	"BGM+380+L1+9'NAD+BY+++B\xdcTTNER GMBH'UNT+9+1'UNZ+1+L1'"

// A Latin-1 payload reads as Latin-1 in the console (BÜTTNER, not
// B\xDCTTNER), the editor edits it as text and the hub stores the edit as
// Latin-1 again (Ö is 0xD6, not the two UTF-8 bytes C3 96).
func TestConsoleEditsLatin1AsLatin1(t *testing.T) {
	ctx := newTab(t)
	e := newEnv(t)
	e.deadLetter(t, "ACME", latin1Broken)
	login(t, ctx, e.srv.URL, opTok)
	waitFor(t, ctx, `!!document.querySelector('#view[data-ready=overview]')`)

	page(t, ctx, "#/message/DLQ:1", "message")
	seg := eval[string](t, ctx, `document.querySelector('#segments').textContent`)
	if !strings.Contains(seg, "NAD+BY+++BÜTTNER GMBH'") || strings.Contains(seg, `\xDC`) {
		t.Fatalf("segments of a Latin-1 payload: %s", seg)
	}
	if h := eval[string](t, ctx, `[...document.querySelectorAll('h2')].map(x => x.textContent).join(" | ")`); !strings.Contains(h, "read as ISO-8859-1, as its UNB declares UNOC") {
		t.Fatalf("headings: %s", h)
	}

	do(t, ctx, "open the editor", chromedp.Click(chromedp.ID("edit")))
	waitFor(t, ctx, `!!document.querySelector('#edit-text')`)
	text := eval[string](t, ctx, `document.querySelector('#edit-text').value`)
	if text != strings.Replace(latin1Broken, "\xdc", "Ü", 1) {
		t.Fatalf("editor text %q", text)
	}
	if cs := eval[string](t, ctx, `document.querySelector('#edit-charset').textContent`); !strings.Contains(cs, "ISO-8859-1") {
		t.Fatalf("editor charset note %q", cs)
	}
	fixed := strings.NewReplacer("UNT+9+1", "UNT+4+1", "BÜTTNER GMBH", "BÜTTNER & SÖHNE").Replace(text)
	eval[bool](t, ctx, fmt.Sprintf(`(a => { a.value = %q; a.dispatchEvent(new Event("input")); return true })(document.querySelector('#edit-text'))`, fixed))
	do(t, ctx, "show the diff", chromedp.SendKeys(chromedp.ID("edit-reason"), "UNT count; name"), chromedp.Click(chromedp.ID("edit-preview")))
	waitFor(t, ctx, `document.querySelectorAll('#edit-diff tr.add').length > 0`)
	do(t, ctx, "save the edit", chromedp.Click(chromedp.ID("edit-save")))
	waitFor(t, ctx, `decodeURIComponent(location.hash).startsWith("#/message/DLQ:") && decodeURIComponent(location.hash) !== "#/message/DLQ:1" && `+viewReady)
	editedID := strings.TrimPrefix(eval[string](t, ctx, `decodeURIComponent(location.hash)`), "#/message/")

	res, err := e.ops.Show(context.Background(), editedID, ops.ShowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer("UNT+9+1", "UNT+4+1", "B\xdcTTNER GMBH", "B\xdcTTNER & S\xd6HNE").Replace(latin1Broken)
	if string(res.Payload) != want {
		t.Fatalf("stored edit %q, want the Latin-1 bytes %q", res.Payload, want)
	}
}

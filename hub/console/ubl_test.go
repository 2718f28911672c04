package console_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A UBL dead letter shows one element a line with its XPath, the elements
// of the failing rule marked, and the rule id in the headers.
func TestConsoleShowsUBLOutline(t *testing.T) {
	var data []byte
	for _, d := range []string{"../../../shared/ubl", "../../../../shared/ubl"} {
		if b, err := os.ReadFile(filepath.Join(d, "invalid/itplr-kosit__validator-configuration-xrechnung__ubl-br-co-15-no-multiple-bt-110-allowed-test.xml")); err == nil {
			data = b
		}
	}
	if data == nil {
		t.Skip("../shared/ubl not found")
	}
	ctx := newTab(t)
	e := newEnv(t)
	e.deadLetter(t, "ACME", string(data))
	login(t, ctx, e.srv.URL, readTok)
	page(t, ctx, "#/message/DLQ:1", "message")
	if h := eval[string](t, ctx, `[...document.querySelectorAll('#view h2')].map(h => h.textContent).join("|")`); !strings.Contains(h, "one UBL element a line") {
		t.Fatalf("headings %q", h)
	}
	if got := eval[string](t, ctx, `document.querySelector('#failing-segment').textContent`); !strings.Contains(got, "/Invoice") || !strings.Contains(got, "<- ") || !strings.Contains(got, "BR-CO-15") {
		t.Fatalf("failing element row %q, want its XPath marked BR-CO-15", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#segments tr').length`); n < 20 {
		t.Fatalf("%d rows, want one per element", n)
	}
	if text := eval[string](t, ctx, `document.querySelector('#view').textContent`); !strings.Contains(text, "x-rule") || !strings.Contains(text, "BR-CO-15") {
		t.Fatalf("headers do not show x-rule BR-CO-15:\n%s", text)
	}
}

package console_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"

	"github.com/chromedp/chromedp"
)

// TestConsoleFirstPaint100k measures the overview with 100 000 dead
// letters in a real browser: the first contentful paint, when the overview
// is on screen, and the API's own time. Opt-in (it fills a stream for a
// few seconds): EDIHUB_CONSOLE_BENCH=1. It asserts nothing about speed
// (the machine is shared); it logs the numbers BENCHMARKS.md records.
func TestConsoleFirstPaint100k(t *testing.T) {
	if os.Getenv("EDIHUB_CONSOLE_BENCH") == "" {
		t.Skip("opt-in measurement: EDIHUB_CONSOLE_BENCH=1 go test -run FirstPaint100k -v ./hub/console/")
	}
	ctx := newTab(t)
	e := newEnv(t)
	loads := func(label string) {
		for i := range 3 {
			do(t, ctx, "reload the overview", chromedp.Navigate("about:blank"), chromedp.Navigate(e.srv.URL+"/console/#/"))
			waitFor(t, ctx, `!!document.querySelector('#view[data-ready=overview]')`)
			fcp := eval[float64](t, ctx, `(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime`)
			ready := eval[string](t, ctx, `document.querySelector('#view').dataset.readyMs`)
			total := eval[string](t, ctx, `document.querySelector('.card.dlq .n').textContent`)
			t.Logf("%s, load %d: first contentful paint %.0f ms, overview with %s dead letters on screen at %s ms (navigation start = 0)", label, i+1, fcp, total, ready)
		}
	}
	// The same page with nothing in the streams: the browser's own floor
	// on this machine.
	login(t, ctx, e.srv.URL, readTok)
	waitFor(t, ctx, `!!document.querySelector('#view[data-ready=overview]')`)
	loads("empty streams")

	const n = 100_000
	start := time.Now()
	publishDeadLetters(t, e.JS, nil, n/2, "schema", "ACME")
	publishDeadLetters(t, e.JS, nil, n/4, "business", "GLOBEX")
	publishDeadLetters(t, e.JS, nil, n/4, "partner-rejected", "INITECH")
	t.Logf("filled %d dead letters in %v (stream DLQ holds %d)", n, time.Since(start).Round(time.Millisecond), jetstreamtest.CountMsgs(t, e.JS, "DLQ"))

	// The first overview reads every message (serve does it at start, in
	// the background); later ones read what is new since.
	for _, path := range []string{"/api/v1/overview", "/api/v1/overview", "/api/v1/overview", "/api/v1/overview",
		"/api/v1/dlq?view=messages&limit=50&order=newest", "/api/v1/dlq?view=messages&limit=50&order=newest&offset=50",
		"/api/v1/dlq?view=groups&limit=50&max_ids=1000", "/api/v1/dlq?view=groups&limit=50&max_ids=1000&partner=ACME"} {
		req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+readTok)
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var ov struct {
			Summary struct {
				Totals map[string]int `json:"totals"`
			} `json:"summary"`
		}
		_ = json.Unmarshal(b, &ov)
		t.Logf("GET %s: %d, %d bytes in %v (totals %v)", path, resp.StatusCode, len(b), time.Since(t0).Round(time.Millisecond), ov.Summary.Totals)
	}

	loads("100 000 dead letters")
}

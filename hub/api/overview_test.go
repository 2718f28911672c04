package api

import (
	"testing"
	"time"

	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/wire"
)

func TestChartBucketsPerHourByCause(t *testing.T) {
	now := time.Date(2026, 11, 30, 15, 20, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	entries := []ops.Entry{
		{Kind: wire.KindDLQ, Cause: "schema", Time: at(10 * time.Minute)}, // this hour: last bucket
		{Kind: wire.KindDLQ, Cause: "schema", Time: at(15 * time.Minute)}, // same
		{Kind: wire.KindDLQ, Cause: "business", Time: at(2 * time.Hour)},  // 13:20 → bucket of 13:00
		{Kind: wire.KindPoison, Cause: "panic", Time: at(23 * time.Hour)}, // 16:20 yesterday
		{Kind: wire.KindDLQ, Cause: "schema", Time: at(25 * time.Hour)},   // outside the window
	}
	c := chartOf(entries, now, "24h", 24*time.Hour)
	if c.Buckets != 24 || !c.Start.Equal(time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)) {
		t.Fatalf("window %d buckets from %v", c.Buckets, c.Start)
	}
	got := map[string][]int{}
	for _, s := range c.Series {
		got[s.Kind+"/"+s.Cause] = s.Counts
	}
	if len(got) != 3 || got["dlq/schema"][23] != 2 || got["dlq/business"][21] != 1 || got["poison/panic"][0] != 1 {
		t.Fatalf("series: %v", got)
	}
	if w := chartOf(entries, now, "7d", 7*24*time.Hour); w.Buckets != 168 || len(w.Series) != 3 || w.Series[1].Cause != "schema" || w.Series[1].Total != 3 {
		t.Fatalf("7d: %+v", w.Series)
	}
}

func TestOverviewEndpoint(t *testing.T) {
	e := newOpsEnv(t)
	e.deadLetters(t, "ACME", 2, "junk one", "junk two")
	srv := apiServer(t, e)
	code, out := call(t, srv, "GET", "/api/v1/overview?window=7d", readTok, "")
	if code != 200 {
		t.Fatalf("overview: %d %v", code, out)
	}
	chart := out["chart"].(map[string]any)
	series := chart["series"].([]any)
	if chart["buckets"].(float64) != 168 || len(series) != 1 || series[0].(map[string]any)["total"].(float64) != 2 {
		t.Fatalf("chart: %v", chart)
	}
	if out["summary"].(map[string]any)["totals"].(map[string]any)["dlq"].(float64) != 2 {
		t.Fatalf("summary: %v", out["summary"])
	}
	if f := out["facets"].(map[string]any)["partner"].([]any); len(f) != 1 || f[0] != "ACME" {
		t.Fatalf("facets: %v", out["facets"])
	}
	if code, _ := call(t, srv, "GET", "/api/v1/overview?window=1y", readTok, ""); code != 400 {
		t.Fatalf("bad window: %d", code)
	}
}

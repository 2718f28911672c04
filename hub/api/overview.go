package api

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/wire"
)

// Overview is the console's first page: the counts of `dlq ls`, a chart
// of dead letters and quarantines per hour by cause, the partitions' lag
// and the running hub's leak probe and alerts. Everything is computed on
// the server from the streams: the browser gets a few kilobytes however
// many messages there are.
type Overview struct {
	Summary ops.Summary         `json:"summary"`
	Chart   Chart               `json:"chart"`
	Lag     []PartitionLag      `json:"lag"`
	Status  *hub.Status         `json:"status,omitempty"`
	Facets  map[string][]string `json:"facets"` // distinct stages, causes, partners (for filters)
	TookMS  int64               `json:"took_ms"`
}

// Chart counts dead letters (kind dlq) and quarantines (kind poison) per
// hour of the window, by cause.
type Chart struct {
	Window        string        `json:"window"` // 24h or 7d
	Start         time.Time     `json:"start"`  // first bucket's start (a full hour)
	BucketSeconds int           `json:"bucket_seconds"`
	Buckets       int           `json:"buckets"`
	Series        []ChartSeries `json:"series"`
}

// ChartSeries is one kind and cause: Counts[i] is bucket i's count.
type ChartSeries struct {
	Kind   string `json:"kind"`
	Cause  string `json:"cause"`
	Total  int    `json:"total"`
	Counts []int  `json:"counts"`
}

// PartitionLag is one consumer of the ingest stream: messages not yet
// delivered, delivered but not acknowledged, and redelivered.
type PartitionLag struct {
	Consumer    string `json:"consumer"`
	Pending     uint64 `json:"pending"`
	AckPending  int    `json:"ack_pending"`
	Redelivered int    `json:"redelivered"`
}

func (a *api) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	start := time.Now()
	window := r.URL.Query().Get("window")
	var span time.Duration
	switch window {
	case "", "24h":
		window, span = "24h", 24*time.Hour
	case "7d":
		span = 7 * 24 * time.Hour
	default:
		writeJSONError(w, http.StatusBadRequest, "window: want 24h or 7d")
		return
	}
	var sum ops.Summary
	var chart Chart
	if a.cache != nil {
		var err error
		if sum, chart, err = a.cachedOverview(ctx, window, span); err != nil {
			fail(w, err)
			return
		}
	} else {
		var err error
		if sum, err = a.ops.List(ctx); err != nil {
			fail(w, err)
			return
		}
		entries, err := a.ops.Inspect(ctx, ops.Filter{Kinds: []string{wire.KindDLQ, wire.KindPoison}, Since: span + time.Hour})
		if err != nil {
			fail(w, err)
			return
		}
		chart = chartOf(entries, a.opt.Now(), window, span)
	}
	ov := Overview{Summary: sum, Chart: chart, Lag: a.lag(ctx), Facets: facetsOf(sum)}
	if a.opt.Status != nil {
		st := a.opt.Status()
		ov.Status = &st
	}
	ov.TookMS = time.Since(start).Milliseconds()
	writeJSON(w, http.StatusOK, ov)
}

// overviewTTL is how long a computed summary and chart are reused while
// no stream changed (ages and the chart's hours move with the clock).
const overviewTTL = 10 * time.Second

type overviewMemo struct {
	version uint64
	at      time.Time
	sum     ops.Summary
	chart   Chart
}

// cachedOverview summarises the entry cache, reusing the last result while
// the streams are unchanged and it is younger than overviewTTL.
func (a *api) cachedOverview(ctx context.Context, window string, span time.Duration) (ops.Summary, Chart, error) {
	all, version, err := a.cache.versioned(ctx)
	if err != nil {
		return ops.Summary{}, Chart{}, err
	}
	now := a.opt.Now()
	a.memoMu.Lock()
	defer a.memoMu.Unlock()
	if m, ok := a.memo[window]; ok && m.version == version && now.Sub(m.at) < overviewTTL && !now.Before(m.at) {
		return m.sum, m.chart, nil
	}
	m := overviewMemo{version: version, at: now, sum: ops.Summarize(all, now), chart: chartOf(all, now, window, span)}
	if a.memo == nil {
		a.memo = map[string]overviewMemo{}
	}
	a.memo[window] = m
	return m.sum, m.chart, nil
}

func chartOf(entries []ops.Entry, now time.Time, window string, span time.Duration) Chart {
	n := int(span / time.Hour)
	end := now.UTC().Truncate(time.Hour).Add(time.Hour)
	c := Chart{Window: window, Start: end.Add(-span), BucketSeconds: 3600, Buckets: n, Series: []ChartSeries{}}
	idx := map[[2]string]int{}
	for _, e := range entries {
		if (e.Kind != wire.KindDLQ && e.Kind != wire.KindPoison) || e.Superseded() || e.Time.Before(c.Start) || !e.Time.Before(end) {
			continue
		}
		k := [2]string{e.Kind, e.Cause}
		i, ok := idx[k]
		if !ok {
			i = len(c.Series)
			idx[k] = i
			c.Series = append(c.Series, ChartSeries{Kind: e.Kind, Cause: e.Cause, Counts: make([]int, n)})
		}
		b := int(e.Time.Sub(c.Start) / time.Hour)
		c.Series[i].Counts[b]++
		c.Series[i].Total++
	}
	sort.Slice(c.Series, func(i, j int) bool {
		if c.Series[i].Kind != c.Series[j].Kind {
			return c.Series[i].Kind < c.Series[j].Kind
		}
		return c.Series[i].Cause < c.Series[j].Cause
	})
	return c
}

func facetsOf(s ops.Summary) map[string][]string {
	sets := map[string]map[string]bool{"stage": {}, "cause": {}, "partner": {}}
	for _, r := range s.Rows {
		sets["stage"][r.Stage] = true
		sets["cause"][r.Cause] = true
		sets["partner"][r.Partner] = true
	}
	out := map[string][]string{}
	for k, set := range sets {
		vals := []string{}
		for v := range set {
			if v != "" {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		out[k] = vals
	}
	return out
}

// lag reads every durable consumer of the ingest stream (one per
// partition, ingest-p<N>); nothing when the API has no JetStream context.
func (a *api) lag(ctx context.Context) []PartitionLag {
	out := []PartitionLag{}
	if a.opt.JS == nil {
		return out
	}
	s, err := a.opt.JS.Stream(ctx, a.opt.Streams.Ingest)
	if err != nil {
		return out
	}
	l := s.ListConsumers(ctx)
	for ci := range l.Info() {
		out = append(out, PartitionLag{Consumer: ci.Name, Pending: ci.NumPending, AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered})
	}
	if err := l.Err(); err != nil {
		a.log.Warn().Err(err).Msg("overview: cannot list the ingest consumers")
	}
	sort.Slice(out, func(i, j int) bool { return consumerLess(out[i].Consumer, out[j].Consumer) })
	return out
}

// consumerLess orders ingest-p2 before ingest-p10.
func consumerLess(x, y string) bool {
	tx, ty := strings.TrimLeft(x, "abcdefghijklmnopqrstuvwxyz-_"), strings.TrimLeft(y, "abcdefghijklmnopqrstuvwxyz-_")
	if len(tx) != len(ty) {
		return len(tx) < len(ty)
	}
	return x < y
}

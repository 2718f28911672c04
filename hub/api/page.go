package api

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/edihub/edihub/hub/ops"
)

// page is server-side pagination of a listing: offset and limit (0: all,
// as before pagination existed), newest first on request, and at most
// maxIDs IDs per group (0: all).
type page struct {
	offset, limit, maxIDs int
	newest                bool
}

func pageOf(r *http.Request) (page, error) {
	q := r.URL.Query()
	var p page
	for _, f := range []struct {
		key string
		to  *int
	}{{"offset", &p.offset}, {"limit", &p.limit}, {"max_ids", &p.maxIDs}} {
		if v := q.Get(f.key); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return p, ops.BadRequest("%s: want a number of 0 or more", f.key)
			}
			*f.to = n
		}
	}
	switch q.Get("order") {
	case "", "oldest":
	case "newest":
		p.newest = true
	default:
		return p, ops.BadRequest("order: want oldest or newest")
	}
	return p, nil
}

// inspect returns the entries f selects. A paged request (limit set) is
// answered from the entry cache, without headers (GET /api/v1/dlq/{id}
// has them); an unpaged one reads the streams as the CLI does.
func (a *api) inspect(ctx context.Context, f ops.Filter, p page) ([]ops.Entry, error) {
	if p.limit == 0 || a.cache == nil {
		return a.ops.Inspect(ctx, f)
	}
	all, err := a.cache.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	now := a.opt.Now()
	var out []ops.Entry // all is the cache's: never written to
	for _, e := range all {
		if f.Matches(e, now) {
			out = append(out, e)
		}
	}
	return out, nil
}

// pagedMessages answers a paged view=messages from the cache touching only
// the page's entries: the matches are kept as indexes (sorted by time for
// newest first) and only the page is copied out.
func (a *api) pagedMessages(ctx context.Context, f ops.Filter, p page) (map[string]any, error) {
	all, err := a.cache.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	now := a.opt.Now()
	var idx []int32
	for i := range all {
		if f.Matches(all[i], now) {
			idx = append(idx, int32(i))
		}
	}
	if p.newest {
		slices.SortStableFunc(idx, func(x, y int32) int { return all[y].Time.Compare(all[x].Time) })
	}
	out := []ops.Entry{}
	for _, i := range window(p, idx) {
		out = append(out, all[i])
	}
	return map[string]any{"messages": out, "total": len(idx), "offset": p.offset, "limit": p.limit}, nil
}

func window[T any](p page, all []T) []T {
	if p.offset >= len(all) {
		return []T{}
	}
	out := all[p.offset:]
	if p.limit > 0 && len(out) > p.limit {
		out = out[:p.limit]
	}
	return out
}

// messages answers view=messages: one page and the total.
func (p page) messages(entries []ops.Entry) map[string]any {
	if p.newest {
		slices.SortStableFunc(entries, func(a, b ops.Entry) int { return b.Time.Compare(a.Time) })
	}
	return map[string]any{"messages": window(p, entries), "total": len(entries), "offset": p.offset, "limit": p.limit}
}

// groups answers view=groups: one page of groups, each with at most
// maxIDs IDs (its count stays whole).
func (p page) groups(gs []ops.Group) map[string]any {
	out := window(p, gs)
	if p.maxIDs > 0 {
		for i := range out {
			if len(out[i].IDs) > p.maxIDs {
				out[i].IDs = out[i].IDs[:p.maxIDs]
			}
		}
	}
	return map[string]any{"groups": out, "total": len(gs), "offset": p.offset, "limit": p.limit}
}

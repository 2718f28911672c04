package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

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

// pagedMessages answers a paged view=messages (limit set) from the entry
// cache, without headers (GET /api/v1/dlq/{id} has them), touching only
// the page's entries: the matches are kept as indexes (sorted by time for
// newest first) and only the page is copied out.
func (a *api) pagedMessages(ctx context.Context, f ops.Filter, p page) (map[string]any, error) {
	all, version, err := a.cache.versioned(ctx)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("messages|%+v|%v", f, p.newest)
	m, ok := a.lists.get(key, version, a.opt.Now())
	if !ok {
		now := a.opt.Now()
		for i := range all {
			if f.Matches(all[i], now) {
				m.idx = append(m.idx, int32(i))
			}
		}
		if p.newest {
			slices.SortStableFunc(m.idx, func(x, y int32) int { return all[y].Time.Compare(all[x].Time) })
		}
		a.lists.put(key, version, now, m)
	}
	out := []ops.Entry{}
	for _, i := range window(p, m.idx) {
		out = append(out, all[i])
	}
	return map[string]any{"messages": out, "total": len(m.idx), "offset": p.offset, "limit": p.limit}, nil
}

// pagedGroups answers a paged view=groups from the cache, grouping once
// per stream state and filter.
func (a *api) pagedGroups(ctx context.Context, f ops.Filter, p page) (map[string]any, error) {
	all, version, err := a.cache.versioned(ctx)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("groups|%+v", f)
	m, ok := a.lists.get(key, version, a.opt.Now())
	if !ok {
		now := a.opt.Now()
		var sel []ops.Entry
		for _, e := range all {
			if f.Matches(e, now) {
				sel = append(sel, e)
			}
		}
		m.groups = ops.GroupFailures(sel)
		a.lists.put(key, version, now, m)
	}
	return p.groups(m.groups), nil
}

// listMemo keeps the last listings computed from the entry cache (the
// matching indexes or groups of a filter) while the streams are unchanged
// and for at most listTTL (a since filter moves with the clock).
type listMemo struct {
	mu sync.Mutex
	m  map[string]listResult
}

type listResult struct {
	version uint64
	at      time.Time
	idx     []int32
	groups  []ops.Group
}

const (
	listTTL     = 10 * time.Second
	listMemoMax = 32
)

func (l *listMemo) get(key string, version uint64, now time.Time) (listResult, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.m[key]
	if !ok || r.version != version || now.Sub(r.at) >= listTTL || now.Before(r.at) {
		return listResult{}, false
	}
	return r, true
}

func (l *listMemo) put(key string, version uint64, now time.Time, r listResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= listMemoMax {
		l.m = map[string]listResult{}
	}
	r.version, r.at = version, now
	l.m[key] = r
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
// maxIDs IDs and as many per sub-group (counts stay whole). A group's
// filter fetches all its IDs: view=groups with that filter and max_ids=0.
func (p page) groups(gs []ops.Group) map[string]any {
	out := slices.Clone(window(p, gs)) // gs may be memoised: never written to
	if p.maxIDs > 0 {
		for i := range out {
			if len(out[i].IDs) > p.maxIDs {
				out[i].IDs = out[i].IDs[:p.maxIDs]
			}
			subs := slices.Clone(out[i].Subgroups)
			for j := range subs {
				if len(subs[j].IDs) > p.maxIDs {
					subs[j].IDs = subs[j].IDs[:p.maxIDs]
				}
			}
			out[i].Subgroups = subs
		}
	}
	return map[string]any{"groups": out, "total": len(gs), "offset": p.offset, "limit": p.limit}
}

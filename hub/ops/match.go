package ops

import (
	"context"
	"slices"
	"time"
)

// Matches reports whether f selects e at now: its kinds, its since and
// its fields, as Inspect selects (the API filters the entries it keeps
// with it).
func (f Filter) Matches(e Entry, now time.Time) bool {
	if !slices.Contains(f.kinds(), e.Kind) {
		return false
	}
	if f.Since > 0 && e.Time.Before(now.Add(-f.Since)) {
		return false
	}
	return f.match(e)
}

// Edits returns every edited original's ID with the ID of its edit (or
// "pending" while an edit is being stored), and for the originals whose
// edit was replayed, where it went: the edits bucket that Inspect reads.
func (o *Ops) Edits(ctx context.Context) (edits, replayed map[string]string, err error) {
	return o.edits(ctx)
}

package ops

import (
	"context"
	"testing"
	"time"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// Page views are read events: every one recorded, left out of listings
// unless asked for.
func TestAuditListKeepsReadEventsApart(t *testing.T) {
	env, _, o := keyedOps(t)
	jetstreamtest.PublishIngest(t, env.JS, "ACME", edifacttest.BadCount("S:14", "R:14", "V1"), nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 1 })
	ctx := context.Background()
	for range 3 {
		if _, err := o.Show(ctx, "DLQ:1", ShowOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := o.Park(ctx, []string{"DLQ:1"}, "later"); err != nil {
		t.Fatal(err)
	}
	count := func(f AuditFilter) (shows, parks int) {
		recs, err := o.AuditList(ctx, f, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			switch r.Event.Action {
			case "show":
				shows++
			case "park":
				parks++
			}
		}
		return shows, parks
	}
	for _, c := range []struct {
		f            AuditFilter
		shows, parks int
	}{
		{AuditFilter{}, 0, 1},
		{AuditFilter{Human: true}, 0, 1},
		{AuditFilter{All: true}, 3, 1},
		{AuditFilter{Action: "show"}, 3, 0},
	} {
		if s, p := count(c.f); s != c.shows || p != c.parks {
			t.Errorf("%+v: %d shows, %d parks; want %d, %d", c.f, s, p, c.shows, c.parks)
		}
	}
}

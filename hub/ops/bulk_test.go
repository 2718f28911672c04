package ops

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// Park and drop by filter have a replay's guards: a filter that selects
// everything is refused, a reason is required, a dry run changes and
// audits nothing, Max caps a run and says how many are left, and every
// message acted on is audited with the filter.
func TestParkDropMatching(t *testing.T) {
	ctx := context.Background()
	e := newOpsEnv(t)
	e.failValidate.Store(true)
	e.deadLetters(t, "ACME", 3, "junk one", "junk two", edifacttest.Invoice("B1"))
	e.deadLetters(t, "BETA", 5, "junk three", edifacttest.Invoice("B2"))
	schema := &Filter{Cause: "schema"}

	for _, c := range []struct {
		name string
		req  BulkRequest
		want error
	}{
		{"everything", BulkRequest{Filter: &Filter{}, Reason: "x"}, ErrBadRequest},
		{"no reason", BulkRequest{Filter: schema}, ErrReasonRequired},
		{"ids and filter", BulkRequest{IDs: []string{"DLQ:1"}, Filter: schema, Reason: "x"}, ErrBadRequest},
		{"over max", BulkRequest{IDs: []string{"DLQ:1", "DLQ:2"}, Max: 1, Reason: "x"}, ErrBadRequest},
	} {
		if _, err := e.ops.ParkMatching(ctx, c.req); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := e.ops.DropMatching(ctx, BulkRequest{IDs: []string{"DLQ:1"}}); !errors.Is(err, ErrReasonRequired) {
		t.Errorf("drop without a reason: %v", err)
	}

	before := jetstreamtest.StreamStates(t, e.JS, "DLQ", "PARKING", "AUDIT")
	rep, err := e.ops.ParkMatching(ctx, BulkRequest{Filter: schema, DryRun: true, Max: 2, Reason: "junk batch"})
	if err != nil || !rep.DryRun || rep.Matched != 3 || rep.Done != 2 || rep.Left != 1 || len(rep.Results) != 2 {
		t.Fatalf("dry run: %v %+v", err, rep)
	}
	if after := jetstreamtest.StreamStates(t, e.JS, "DLQ", "PARKING", "AUDIT"); !maps.Equal(before, after) {
		t.Fatalf("a dry run changed something: %v → %v", before, after)
	}

	rep, err = e.ops.ParkMatching(ctx, BulkRequest{Filter: schema, Max: 2, Reason: "junk batch"})
	if err != nil || rep.Done != 2 || rep.Left != 1 || rep.Filter != "kind=dlq,cause=schema" {
		t.Fatalf("park: %v %+v", err, rep)
	}
	ev := lastAudit(t, e.JS)
	if ev.Action != "park" || ev.Reason != "junk batch" || ev.Details["filter"] != "kind=dlq,cause=schema" || ev.Details["to"] == "" {
		t.Fatalf("park audited as %+v", ev)
	}
	if n := jetstreamtest.CountMsgs(t, e.JS, "PARKING"); n != 2 {
		t.Fatalf("PARKING holds %d, want 2", n)
	}

	// A filter acts on parked messages only when it names their kind; a
	// parked message cannot be parked again.
	rep, err = e.ops.DropMatching(ctx, BulkRequest{Filter: &Filter{Kinds: []string{wire.KindParking}, Cause: "schema"}, DryRun: true, Reason: "junk"})
	if err != nil || rep.Matched != 2 || rep.Done != 2 {
		t.Fatalf("drop dry run of the parked: %v %+v", err, rep)
	}
	rep, err = e.ops.ParkMatching(ctx, BulkRequest{Filter: &Filter{Kinds: []string{wire.KindParking}}, DryRun: true, Reason: "again"})
	if err != nil || rep.Failed != 2 || !strings.Contains(rep.Results[0].Error, "parked already") {
		t.Fatalf("park the parked (dry run): %v %+v", err, rep)
	}
	rep, err = e.ops.DropMatching(ctx, BulkRequest{Filter: &Filter{Cause: "business", Partner: "BETA"}, Reason: "partner resends"})
	if err != nil || rep.Matched != 1 || rep.Done != 1 || rep.Failed != 0 {
		t.Fatalf("drop: %v %+v", err, rep)
	}
	if ev := lastAudit(t, e.JS); ev.Action != "drop" || ev.Details["filter"] != "kind=dlq,cause=business,partner=BETA" || ev.Details["partner"] != "BETA" {
		t.Fatalf("drop audited as %+v", ev)
	}
	if n := jetstreamtest.CountMsgs(t, e.JS, "DLQ"); n != 2 {
		t.Fatalf("DLQ holds %d, want 2 (one junk left over max, one business of ACME)", n)
	}
}

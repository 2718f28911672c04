package ops

import (
	"context"
	"errors"
	"github.com/edihub/edihub/edifact/edifacttest"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

func TestOpsListInspectGroupShow(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	e.failValidate.Store(true)
	e.deadLetters(t, "ACME", 3, string(hostile), "not edi at all", edifacttest.Invoice("R1"))
	e.deadLetters(t, "BETA", 4, edifacttest.Invoice("R2"))

	s, err := e.ops.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Totals[wire.KindDLQ] != 4 || len(s.Rows) != 3 {
		t.Fatalf("summary: %+v", s)
	}
	r := s.Rows[0] // dlq/parse/schema/ACME sorts first
	if r.Stage != "parse" || r.Cause != "schema" || r.Partner != "ACME" || r.Count != 2 || r.Ages["<1h"] != 2 {
		t.Fatalf("first row: %+v", r)
	}

	got, err := e.ops.Inspect(ctx, Filter{Cause: "business"})
	if err != nil || len(got) != 2 {
		t.Fatalf("inspect cause=business: %d, %v", len(got), err)
	}
	if got[0].Stage != "validate" || got[0].ErrorMsg == "" || got[0].OriginalTopic != "edi.ingest.ACME" {
		t.Fatalf("entry: %+v", got[0])
	}
	groups := GroupFailures(got)
	if len(groups) != 1 || groups[0].Count != 2 || len(groups[0].Partners) != 2 {
		t.Fatalf("groups: %+v", groups)
	}
	if got, _ := e.ops.Inspect(ctx, Filter{Partner: "BETA", Since: time.Hour}); len(got) != 1 {
		t.Fatalf("inspect partner=BETA since=1h: %d", len(got))
	}
	if got, _ := e.ops.Inspect(ctx, Filter{Kinds: []string{wire.KindPoison}}); len(got) != 0 {
		t.Fatalf("poison: %d", len(got))
	}

	res, err := e.ops.Show(ctx, "dlq:1", ShowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Payload) != string(hostile) || res.Segments.Error == "" {
		t.Fatalf("show: payload %q segments %+v", res.Payload, res.Segments)
	}
	if ev := lastAudit(t, e.JS); ev.Action != "show" || ev.Actor != "alice" || ev.IDs[0] != "DLQ:1" || ev.PayloadBefore != audit.PayloadHash(hostile) {
		t.Fatalf("show not audited: %+v", ev)
	}
	if _, err := e.ops.Show(ctx, "DLQ:999", ShowOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing message: %v", err)
	}
	if _, err := e.ops.Show(ctx, "AUDIT:1", ShowOptions{}); !errors.Is(err, ErrBadID) {
		t.Fatalf("foreign stream: %v", err)
	}
}

// Bulk replay is paced by the injected clock and capped by Max; what is
// over the cap stays for the next run.
func TestReplayHonoursRateAndMax(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	e.failValidate.Store(true)
	e.deadLetters(t, "ACME", 5, edifacttest.Invoice("A1"), edifacttest.Invoice("A2"), edifacttest.Invoice("A3"), edifacttest.Invoice("A4"), edifacttest.Invoice("A5"))
	e.failValidate.Store(false)
	before := e.clock.Now()
	var progress []int
	f := Filter{Partner: "ACME"}
	rep, err := e.ops.Replay(ctx, ReplayRequest{Filter: &f, Rate: 2, Max: 3, Progress: func(done, total int) { progress = append(progress, done) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Matched != 5 || rep.Replayed != 3 || rep.Left != 2 || len(progress) != 3 {
		t.Fatalf("report: %+v progress %v", rep, progress)
	}
	n, total := e.clock.slept()
	if n != 2 || total != time.Second || e.clock.Now().Sub(before) != time.Second {
		t.Fatalf("2/s for 3 messages must wait 2 × 500ms; slept %d times, %v", n, total)
	}
	for i, it := range rep.Items {
		if it.Outcome != OutcomeReplayed || it.Subject != "edi.ingest.ACME" || !strings.HasPrefix(it.NewID, "INGEST:") {
			t.Fatalf("item %d: %+v", i, it)
		}
	}
	if rep.Items[0].ID != "DLQ:1" {
		t.Fatalf("oldest first: %+v", rep.Items[0])
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "PARSED") == 3 })
	if n := jetstreamtest.CountMsgs(t, e.JS, "DLQ"); n != 2 {
		t.Fatalf("DLQ has %d, want the 2 over the cap", n)
	}
	for _, m := range jetstreamtest.StreamMsgs(t, e.JS, "INGEST")[5:] {
		if m.Header.Get(wire.HdrReplayedFrom) == "" || m.Header.Get(wire.HdrErrorClass) == "" || m.Header.Get("Nats-Msg-Id") == "" {
			t.Fatalf("replayed copy lacks history headers: %v", m.Header)
		}
	}
	if ev := lastAudit(t, e.JS); ev.Action != "replay" || ev.Actor != "alice" {
		t.Fatalf("replay not audited: %+v", ev)
	}
	// Unbounded, filterless and over-cap requests are refused.
	for _, bad := range []ReplayRequest{
		{Filter: &Filter{}},
		{Filter: &f, Max: -1},
		{IDs: []string{"DLQ:4", "DLQ:5"}, Max: 1},
		{IDs: []string{"DLQ:4"}, Filter: &f},
		{IDs: []string{"DLQ:4"}, To: "edi.parse.dlq.schema"},
		{IDs: []string{"DLQ:4"}, To: "edi.ingest.*"},
	} {
		if _, err := e.ops.Replay(ctx, bad); !errors.Is(err, ErrBadRequest) {
			t.Fatalf("%+v accepted: %v", bad, err)
		}
	}
}

// A dry-run reports what this build's guard and parser say and changes
// nothing: no jetstreamtest.PublishIngest, no delete, not even an audit event.
func TestDryRunChangesNothing(t *testing.T) {
	e := newOpsEnv(t)
	e.failValidate.Store(true)
	e.deadLetters(t, "ACME", 2, "UNB+broken", edifacttest.Invoice("D1"))
	streams := []string{"DLQ", "INGEST", "PARKING", "AUDIT", "PARSED"}
	before := jetstreamtest.StreamStates(t, e.JS, streams...)
	rep, err := e.ops.Replay(context.Background(), ReplayRequest{Filter: &Filter{Partner: "ACME"}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Replayed != 1 || rep.Failed != 1 || !rep.DryRun {
		t.Fatalf("report: %+v", rep)
	}
	bad, good := rep.Items[0], rep.Items[1]
	if bad.Outcome != OutcomeWouldFail || bad.DryRun.Guard == "ok" && bad.DryRun.Parse == "ok" {
		t.Fatalf("broken: %+v", bad.DryRun)
	}
	if good.Outcome != OutcomeWouldReplay || good.DryRun.Messages != 1 || good.DryRun.Interchanges[0].ControlRef != "D1" ||
		!strings.Contains(good.DryRun.Verdict, "stage validate") {
		t.Fatalf("good: %+v", good.DryRun)
	}
	if n, _ := e.clock.slept(); n != 0 {
		t.Fatalf("dry-run slept %d times", n)
	}
	if after := jetstreamtest.StreamStates(t, e.JS, streams...); !maps.Equal(before, after) {
		t.Fatalf("dry-run changed streams: %v → %v", before, after)
	}
}

func TestDropNeedsAReasonAndParkMoves(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	e.deadLetters(t, "ACME", 2, "junk one", "junk two")
	for _, reason := range []string{"", "   "} {
		if _, err := e.ops.Drop(ctx, []string{"DLQ:1"}, reason); !errors.Is(err, ErrReasonRequired) {
			t.Fatalf("drop with reason %q: %v", reason, err)
		}
	}
	if n := jetstreamtest.CountMsgs(t, e.JS, "DLQ"); n != 2 {
		t.Fatalf("refused drop deleted something: %d", n)
	}
	res, err := e.ops.Drop(ctx, []string{"DLQ:1"}, "test garbage from partner onboarding")
	if err != nil || !res[0].OK {
		t.Fatalf("drop: %+v %v", res, err)
	}
	ev := lastAudit(t, e.JS)
	if ev.Action != "drop" || ev.Reason == "" || ev.PayloadBefore != audit.PayloadHash([]byte("junk one")) {
		t.Fatalf("drop audit: %+v", ev)
	}
	res, err = e.ops.Park(ctx, []string{"DLQ:2"}, "waiting for the partner")
	if err != nil || !res[0].OK || res[0].NewID != "PARKING:1" {
		t.Fatalf("park: %+v %v", res, err)
	}
	if jetstreamtest.CountMsgs(t, e.JS, "DLQ") != 0 || jetstreamtest.CountMsgs(t, e.JS, "PARKING") != 1 {
		t.Fatal("park did not move the message")
	}
	parked := jetstreamtest.StreamMsgs(t, e.JS, "PARKING")[0]
	if parked.Subject != "edi.parse.parking-lot" || string(parked.Data) != "junk two" || parked.Header.Get(wire.HdrParkedFrom) != "DLQ:2" {
		t.Fatalf("parked copy: %s %q %v", parked.Subject, parked.Data, parked.Header)
	}
	if res, _ := e.ops.Park(ctx, []string{"PARKING:1"}, ""); res[0].OK {
		t.Fatal("parked a parked message")
	}
	s, _ := e.ops.List(ctx)
	if s.Totals[wire.KindParking] != 1 || s.Rows[0].Cause != "schema" {
		t.Fatalf("summary after park: %+v", s)
	}
}

// Edit keeps both versions; replaying the original (by ID or by filter)
// sends only the edited one, once.
func TestEditKeepsBothAndReplaysOnlyTheEdit(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	broken := strings.Replace(edifacttest.Invoice("E1"), "UNT+3+1", "UNT+9+1", 1) // wrong segment count
	e.deadLetters(t, "ACME", 1, broken)
	if _, err := e.ops.Edit(ctx, "DLQ:1", []byte(broken), ""); !errors.Is(err, ErrNoChange) {
		t.Fatalf("unchanged edit: %v", err)
	}
	res, err := e.ops.Edit(ctx, "DLQ:1", []byte(edifacttest.Invoice("E1")), "fixed UNT count")
	if err != nil {
		t.Fatal(err)
	}
	if res.Original != "DLQ:1" || res.Edited != "DLQ:2" || res.Before == res.After {
		t.Fatalf("edit: %+v", res)
	}
	if ev := lastAudit(t, e.JS); ev.Action != "edit" || ev.PayloadBefore != res.Before || ev.PayloadAfter != res.After {
		t.Fatalf("edit audit: %+v", ev)
	}
	if _, err := e.ops.Edit(ctx, "DLQ:1", []byte("again"), ""); err == nil || !strings.Contains(err.Error(), "DLQ:2") {
		t.Fatalf("second edit of the original: %v", err)
	}
	live, _ := e.ops.Inspect(ctx, Filter{})
	all, _ := e.ops.Inspect(ctx, Filter{Superseded: true})
	if len(live) != 1 || live[0].ID != "DLQ:2" || live[0].EditedFrom != "DLQ:1" || len(all) != 2 || all[0].SupersededBy != "DLQ:2" {
		t.Fatalf("live %+v all %+v", live, all)
	}
	// A filter matching both replays only the edit.
	dry, err := e.ops.Replay(ctx, ReplayRequest{Filter: &Filter{Partner: "ACME"}, DryRun: true})
	if err != nil || dry.Matched != 1 || dry.Items[0].ID != "DLQ:2" || dry.Items[0].Outcome != OutcomeWouldReplay {
		t.Fatalf("dry-run after edit: %+v %v", dry, err)
	}
	rep, err := e.ops.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:1"}})
	if err != nil || rep.Items[0].Version != "DLQ:2" || rep.Items[0].Outcome != OutcomeReplayed {
		t.Fatalf("replay of the original: %+v %v", rep, err)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "PARSED") == 1 })
	msgs := jetstreamtest.StreamMsgs(t, e.JS, "DLQ")
	if len(msgs) != 1 || string(msgs[0].Data) != broken {
		t.Fatalf("the original must stay as evidence: %d msgs", len(msgs))
	}
	rep, err = e.ops.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:1"}})
	// Done, not failed: the edit went back, and the original says so.
	if err != nil || rep.Items[0].Outcome != OutcomeAlreadyReplayed || rep.AlreadyReplayed != 1 || rep.Skipped+rep.Failed != 0 ||
		!strings.Contains(rep.Items[0].Error, "DLQ:1 was edited into DLQ:2, which was replayed as INGEST:") ||
		rep.Items[0].Version != "DLQ:2" || !strings.HasPrefix(rep.Items[0].NewID, "INGEST:") {
		t.Fatalf("second replay of the original: %+v %v", rep, err)
	}
	if sr, err := e.ops.Show(ctx, "DLQ:1", ShowOptions{}); err != nil || sr.Entry.SupersededBy != "DLQ:2" || !strings.HasPrefix(sr.Entry.EditReplayedAs, "INGEST:") {
		t.Fatalf("show of the original after its edit went back: %+v %v", sr, err)
	}
	if rep, _ := e.ops.Replay(ctx, ReplayRequest{Filter: &Filter{Partner: "ACME"}}); rep.Matched != 0 {
		t.Fatalf("filter picked the superseded original: %+v", rep)
	}
	jetstreamtest.Settle(t, e.JS, 10*time.Second, "INGEST", "RETRY", "PARSED") // nothing else may arrive
	if n := jetstreamtest.CountMsgs(t, e.JS, "PARSED"); n != 1 {
		t.Fatalf("PARSED has %d: both versions were processed", n)
	}
}

// A replayed interchange the ledger has seen is acked as a duplicate, not
// processed twice; --force with a reason overrides.
func TestReplayedDuplicateNotProcessedTwice(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	e.failValidate.Store(true)
	e.deadLetters(t, "ACME", 2, edifacttest.Invoice("DUP1"), edifacttest.Invoice("DUP1"))
	e.failValidate.Store(false)
	jetstreamtest.PublishIngest(t, e.JS, "ACME", edifacttest.Invoice("DUP1"), nil) // the partner retransmits; now it goes through
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "PARSED") == 1 })

	rep, err := e.ops.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:1"}})
	if err != nil || rep.Replayed != 1 {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		return jetstreamtest.MetricSum(t, e.Registry, "edihub_pipeline_duplicate_interchanges_total") == 1
	})
	if n := jetstreamtest.CountMsgs(t, e.JS, "PARSED"); n != 1 {
		t.Fatalf("duplicate processed: PARSED has %d", n)
	}
	acts := strings.Join(auditActions(t, e.JS), " ")
	if !strings.Contains(acts, "alice:replay") || !strings.Contains(acts, ":duplicate-skipped") {
		t.Fatalf("audit: %s", acts)
	}
	if _, err := e.ops.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:2"}, Force: true}); !errors.Is(err, ErrReasonRequired) {
		t.Fatalf("force without reason: %v", err)
	}
	if _, err := e.ops.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:2"}, Force: true, Reason: "partner asked to re-book"}); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "PARSED") == 2 })
	if ev := lastAuditAction(t, e, "replay"); ev.Reason != "partner asked to re-book" || ev.Details["force"] != "true" {
		t.Fatalf("forced replay audit: %+v", ev)
	}
}

func lastAuditAction(t *testing.T, e *opsEnv, action string) audit.Event {
	t.Helper()
	recs, err := audit.Read(context.Background(), e.JS, "AUDIT", time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Event.Action == action {
			return recs[i].Event
		}
	}
	t.Fatalf("no %s event", action)
	return audit.Event{}
}

func TestParseFilter(t *testing.T) {
	f, err := ParseFilter("cause=schema, partner=ACME,since=2d,kind=dlq|parking,error-class=permanent")
	if err != nil {
		t.Fatal(err)
	}
	if f.Cause != "schema" || f.Partner != "ACME" || f.Since != 48*time.Hour || len(f.Kinds) != 2 || f.ErrorClass != "permanent" {
		t.Fatalf("%+v", f)
	}
	for _, bad := range []string{"cause", "colour=red", "since=-1h", "kind=inbox", "since=2x"} {
		if _, err := ParseFilter(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// The real AUDIT stream: ops events chain, verify passes, and the stream
// refuses deletes.
func TestVerifyRealAuditStream(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	e.deadLetters(t, "ACME", 1, "junk")
	if _, err := e.ops.Show(ctx, "DLQ:1", ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ops.Drop(ctx, []string{"DLQ:1"}, "junk"); err != nil {
		t.Fatal(err)
	}
	v, err := e.ops.AuditVerify(ctx, "")
	if err != nil || !v.OK || v.Events < 2 {
		t.Fatalf("verify: %+v %v", v, err)
	}
	recs, err := e.ops.AuditList(ctx, AuditFilter{Since: time.Hour}, 1)
	if err != nil || len(recs) != 1 || recs[0].Event.Action != "drop" {
		t.Fatalf("audit ls limit 1: %+v %v", recs, err)
	}
	// Filters: what people did, by action, by message, by actor.
	recs, err = e.ops.AuditList(ctx, AuditFilter{Action: "show", Message: "DLQ:1", Actor: "alice", Human: true}, 0)
	if err != nil || len(recs) != 1 || recs[0].Event.Action != "show" {
		t.Fatalf("audit ls --action show --message DLQ:1: %+v %v", recs, err)
	}
	if recs, _ := e.ops.AuditList(ctx, AuditFilter{Actor: "mallory"}, 0); len(recs) != 0 {
		t.Fatalf("another actor's events: %+v", recs)
	}
	s, _ := e.JS.Stream(ctx, "AUDIT")
	if err := s.DeleteMsg(ctx, 1); err == nil {
		t.Fatal("AUDIT allowed a delete")
	}
}

package ops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A replay is followed to what the streams say became of each copy:
// parsed, dead-lettered again (the new dead letter linked both ways),
// duplicates (each audited, naming the earlier message), and the batch
// keeps the tally.
func TestReplayFollowedToItsOutcome(t *testing.T) {
	keys, err := audit.NewKeyring([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	env, led, fail := runValidatingHub(t, keys)
	o, err := NewOps(OpsOptions{JS: env.JS, Auditor: audit.New(env.JS, "AUDIT", audit.WithKeyring(keys)), Actor: "alice", Grants: led,
		Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	fail.Store(true)
	for i, p := range []string{edifacttest.Invoice("OK1"), edifacttest.BadCount("SENDER1:14", "RECEIVER1:14", "BAD1"),
		edifacttest.Invoice("DUP1"), edifacttest.Invoice("DUP2")} {
		jetstreamtest.PublishIngest(t, env.JS, "ACME", p, nil)
		jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == i+1 })
	}
	fail.Store(false)
	first := jetstreamtest.PublishIngest(t, env.JS, "ACME", edifacttest.Invoice("DUP1"), nil)
	jetstreamtest.PublishIngest(t, env.JS, "ACME", edifacttest.Invoice("DUP2"), nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "PARSED") == 2 })

	rep, err := o.Replay(ctx, ReplayRequest{IDs: []string{"DLQ:1", "DLQ:2", "DLQ:3", "DLQ:4"}, Outcome: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Batch == "" || rep.Warning != "" {
		t.Fatalf("no batch recorded: %+v", rep)
	}
	got := map[string]ReplayItem{}
	for _, it := range rep.Items {
		got[it.ID] = it
	}
	if it := got["DLQ:1"]; it.Outcome != OutcomeParsed || len(it.Subjects) == 0 || !strings.HasPrefix(it.Subjects[0], "edi.parsed.") {
		t.Fatalf("DLQ:1: %+v", it)
	}
	again := got["DLQ:2"]
	if again.Outcome != OutcomeDeadLettered || !strings.HasPrefix(again.Where, "DLQ:") || again.Cause != wire.CauseSchema ||
		!strings.Contains(again.Verdict, "dead-lettered again as "+again.Where) {
		t.Fatalf("DLQ:2: %+v", again)
	}
	for _, id := range []string{"DLQ:3", "DLQ:4"} {
		if it := got[id]; it.Outcome != OutcomeDuplicate || !strings.Contains(it.Detail, "processed before by INGEST:") {
			t.Fatalf("%s: %+v", id, it)
		}
	}
	if !strings.Contains(got["DLQ:3"].Detail, wire.MsgRef{Stream: "INGEST", Seq: first}.String()) {
		t.Fatalf("the duplicate names another earlier message: %+v", got["DLQ:3"])
	}
	if rep.Tally[OutcomeParsed] != 1 || rep.Tally[OutcomeDeadLettered] != 1 || rep.Tally[OutcomeDuplicate] != 2 {
		t.Fatalf("tally %v", rep.Tally)
	}

	// The new dead letter names what it was replayed from, in the hub's
	// header; the old ID, gone from DLQ, names the new dead letter.
	ref, _ := o.ParseID(again.Where)
	raw, err := o.getMsg(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Header.Get(wire.HdrReplayedFrom) != "DLQ:2" || raw.Header.Get(wire.HdrReplayedBy) != "alice" {
		t.Fatalf("new dead letter's headers: %v", raw.Header)
	}
	if _, err := o.Show(ctx, "DLQ:2", ShowOptions{}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "replayed → "+again.Where) {
		t.Fatalf("show of the replayed message: %v", err)
	}

	// Both duplicates were audited, within the sampler's minute.
	recs, err := o.AuditList(ctx, AuditFilter{Action: "duplicate-skipped"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	from := map[string]bool{}
	for _, r := range recs {
		from[r.Event.Details["replayed_from"]] = true
	}
	if !from["DLQ:3"] || !from["DLQ:4"] {
		t.Fatalf("duplicates of the replay audited: %v", from)
	}

	// The batch is listed and keeps its tally.
	bs, err := o.ReplayBatches(ctx, 0)
	if err != nil || len(bs) != 1 || bs[0].ID != rep.Batch || bs[0].Operator != "alice" || len(bs[0].IDs) != 4 {
		t.Fatalf("batches: %v %+v", err, bs)
	}
	b, err := o.ReplayBatch(ctx, rep.Batch)
	if err != nil || b.Tally[OutcomeDuplicate] != 2 || b.Tally[OutcomeParsed] != 1 {
		t.Fatalf("batch: %v %+v", err, b)
	}
	if _, err := o.ReplayBatch(ctx, "R-nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown batch: %v", err)
	}
}

// A producer's own x-replayed-from is no replay: its dead letter keeps it
// under the producer's name only.
func TestForgedReplayedFromIsNotLinked(t *testing.T) {
	env, _, _ := keyedOps(t)
	h := map[string][]string{wire.HdrReplayedFrom: {"DLQ:99"}, wire.HdrReplayMAC: {"k:forged"}}
	jetstreamtest.PublishIngest(t, env.JS, "ACME", edifacttest.BadCount("S:14", "R:14", "F1"), h)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 1 })
	m := jetstreamtest.StreamMsgs(t, env.JS, "DLQ")[0]
	if m.Header.Get(wire.HdrReplayedFrom) != "" || m.Header.Get(wire.ProducerName(wire.HdrReplayedFrom)) != "DLQ:99" {
		t.Fatalf("forged link: %v", m.Header)
	}
}

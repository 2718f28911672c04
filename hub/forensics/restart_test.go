package forensics

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/edihub/edihub/edifact/edifacttest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

// Reports, payloads and tickets live in JetStream: a new worker on a
// restarted server finds them, the durable consumer does not analyse the
// message again, and a ticket's state and notes survive. Reanalyse then
// overwrites the report and keeps the ticket's state.
func TestForensicsReportsAndTicketsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: dir})
	env := startForensics(t, srv.ClientURL(), fastForensicsConfig(), nil)
	provisionPoison(t, env.js)
	seq := publishPoison(t, env.js, "parse", "GLOBEX", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "KEEP1"), nil)
	r := waitReport(t, env.store, seq, 30*time.Second)
	ctx := context.Background()
	tk, err := env.store.TransitionTicket(ctx, r.ID, "ack", "alice", "looking into it", audit.New(env.js, "AUDIT"))
	if err != nil || tk.State != TicketAcked {
		t.Fatalf("ack: %+v %v", tk, err)
	}
	if _, err := env.store.TransitionTicket(ctx, r.ID, "ack", "alice", "again", nil); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("second ack: %v, want ErrInvalidTransition", err)
	}
	env.stop()
	srv.Shutdown()
	srv.WaitForShutdown()

	srv = jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: dir})
	var starts atomic.Int32
	env2 := startForensics(t, srv.ClientURL(), fastForensicsConfig(), func(o *Options) {
		good := o.Spec
		o.Spec = func(stage string) sandbox.Spec { starts.Add(1); return good(stage) }
	})
	r2, err := env2.store.Report(ctx, r.ID)
	if err != nil || r2.AnalysedAt != r.AnalysedAt || r2.Sandbox.Outcome != sandbox.OutcomeParsedFine {
		t.Fatalf("report after restart: %+v %v", r2, err)
	}
	tk, err = env2.store.Ticket(ctx, r.ID)
	if err != nil || tk.State != TicketAcked || len(tk.Notes) != 2 || tk.Notes[1].Actor != "alice" || tk.Notes[1].Text != "looking into it" {
		t.Fatalf("ticket after restart: %+v %v", tk, err)
	}
	time.Sleep(1500 * time.Millisecond) // give the durable consumer time to (wrongly) redeliver
	if n := starts.Load(); n != 0 {
		t.Fatalf("the acked message was analysed again %d times after the restart", n)
	}

	r3, err := env2.f.Reanalyse(ctx, r.ID)
	if err != nil || r3.Analyses != 2 || starts.Load() != 1 {
		t.Fatalf("reanalyse: %+v %v (starts %d)", r3, err, starts.Load())
	}
	tk, _ = env2.store.Ticket(ctx, r.ID)
	if tk.State != TicketAcked || tk.Notes[len(tk.Notes)-1].Action != "reanalyse" {
		t.Fatalf("ticket after reanalyse: %+v", tk)
	}
	tk, err = env2.store.TransitionTicket(ctx, "T-INGEST-"+strings.TrimPrefix(r.Key, "INGEST/"), "close", "bob", "fixed upstream", audit.New(env2.js, "AUDIT"))
	if err != nil || tk.State != TicketClosed {
		t.Fatalf("close by ticket ID: %+v %v", tk, err)
	}
	var actions []string
	for _, m := range jetstreamtest.StreamMsgs(t, env2.js, "AUDIT") {
		var ev audit.Event
		_ = json.Unmarshal(m.Data, &ev)
		actions = append(actions, ev.Actor+":"+ev.Action)
	}
	want := "forensics-test:forensic-report alice:ticket-ack forensics-test:forensic-reanalyse bob:ticket-close"
	if got := strings.Join(actions, " "); got != want {
		t.Fatalf("audit trail %q, want %q", got, want)
	}
}

// The hub keeps parsing healthy messages while the worker analyses a
// poison message whose child hits its memory cap, and the test process —
// which runs both — does not grow: the allocation happens in the child.
func TestHubKeepsServingWhileSandboxHitsMemoryCap(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	crashing := hub.Stage{Name: "hog", Handle: func(ctx context.Context, m *hub.Message) error {
		if strings.Contains(string(m.Data), "HOG") {
			panic("hog stage: out of memory (simulated in the hub; the child really allocates)")
		}
		return nil
	}}
	cfg := hubtest.FastConfig()
	env := hubtest.Run(t, &hubtest.Options{URL: url, Config: &cfg, Stages: []hub.Stage{parse.Stage(parse.Config{}, nil), crashing}})
	fe := startForensics(t, url, fastForensicsConfig(), nil)

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	ps := jetstreamtest.PartnersInDistinctPartitions(2, 4)
	bad, good := ps[0], ps[1]
	parsedAtStart := jetstreamtest.CountMsgs(t, env.JS, "PARSED")
	jetstreamtest.PublishIngest(t, env.JS, bad, edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "HOG9"), nil)
	stopHealthy := make(chan struct{})
	var sent atomic.Int32
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopHealthy:
				return
			case <-tick.C:
				_, err := env.JS.PublishMsg(context.Background(), &nats.Msg{Subject: wire.IngestSubject(good), Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "OK"+string(rune('A'+i%26))))})
				if err == nil {
					sent.Add(1)
				}
			}
		}
	}()
	var poisonSeq uint64
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		msgs := jetstreamtest.StreamMsgs(t, env.JS, "POISON")
		if len(msgs) == 1 {
			poisonSeq = msgs[0].Sequence
		}
		return poisonSeq > 0
	})
	r := waitReport(t, fe.store, poisonSeq, 60*time.Second)
	parsedAtReport := jetstreamtest.CountMsgs(t, env.JS, "PARSED")
	close(stopHealthy)
	if r.Sandbox.Outcome != sandbox.OutcomeMemoryCap || r.Stage != "hog" || r.Partner != bad {
		t.Fatalf("report %s/%s: %s", r.Partner, r.Stage, r.Sandbox.Summary)
	}
	if parsedAtReport <= parsedAtStart {
		t.Fatalf("no healthy message was parsed between the poison message and its report (%d then %d)", parsedAtStart, parsedAtReport)
	}
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "PARSED") == parsedAtStart+int(sent.Load()) })
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("child peak %d MiB; test process HeapInuse %d → %d MiB; healthy parsed during analysis: %d",
		r.Sandbox.PeakRSSBytes>>20, before.HeapInuse>>20, after.HeapInuse>>20, parsedAtReport-parsedAtStart)
	if grew > 24<<20 {
		t.Fatalf("the hub's process grew by %d MiB during an analysis that used %d MiB in the child", grew>>20, r.Sandbox.PeakRSSBytes>>20)
	}
}

package hub

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edihub/edihub/counter"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

func TestPartitionOfMatchesServerTransform(t *testing.T) {
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", fastConfig(), []Stage{echoStage("parse", nil)}, nil)
	for _, p := range []string{"ACME", "GLOBEX", "initech", "X", "UMBRELLA-CORP"} {
		seq := jetstreamtest.PublishIngest(t, env.js, p, "x", nil)
		s, _ := env.js.Stream(context.Background(), "INGEST")
		m, err := s.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatal(err)
		}
		want := "edi.ingest." + strconv.Itoa(wire.PartitionOf(p, 4)) + "." + p
		if m.Subject != want {
			t.Fatalf("partner %s stored as %s, wire.PartitionOf says %s", p, m.Subject, want)
		}
	}
}

// Test 1: a poison message is quarantined after exactly the threshold; the
// messages behind it in its partition are processed in order; other
// partitions flow meanwhile.
func TestPoisonQuarantinedAfterThresholdOrderKept(t *testing.T) {
	var (
		mu          sync.Mutex
		calls       = map[string]int{}
		doneAt      = map[string]time.Time{}
		poisonCalls atomic.Int32
	)
	stage := echoStage("parse", func(m *Message) error {
		mu.Lock()
		calls[string(m.Data)]++
		doneAt[string(m.Data)] = time.Now()
		mu.Unlock()
		if string(m.Data) == "poison" {
			poisonCalls.Add(1)
			panic("parser exploded")
		}
		return nil
	})
	cfg := fastConfig()
	cfg.Attempts.BackoffBase = 100 * time.Millisecond
	cfg.Attempts.BackoffMax = 200 * time.Millisecond
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg, []Stage{stage}, nil)
	ps := jetstreamtest.PartnersInDistinctPartitions(2, cfg.Partitions)
	a, b := ps[0], ps[1]
	for _, d := range []string{"a1", "poison", "a2", "a3"} {
		jetstreamtest.PublishIngest(t, env.js, a, d, nil)
	}
	for i := 1; i <= 5; i++ {
		jetstreamtest.PublishIngest(t, env.js, b, "b"+strconv.Itoa(i), nil)
	}
	jetstreamtest.Eventually(t, 15*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 8 && jetstreamtest.CountMsgs(t, env.js, "POISON") == 1
	})

	if n := poisonCalls.Load(); n != int32(cfg.Attempts.Threshold) {
		t.Fatalf("poison handler ran %d times, want exactly the threshold %d", n, cfg.Attempts.Threshold)
	}
	var gotA, gotB []string
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "PARSED") {
		switch m.Subject {
		case wire.ParsedSubject(a, "TEST"):
			gotA = append(gotA, string(m.Data))
		case wire.ParsedSubject(b, "TEST"):
			gotB = append(gotB, string(m.Data))
		}
	}
	if want := []string{"a1", "a2", "a3"}; !equal(gotA, want) {
		t.Fatalf("partition of %s: %v, want %v", a, gotA, want)
	}
	if len(gotB) != 5 {
		t.Fatalf("partner %s: %v", b, gotB)
	}
	mu.Lock()
	if !doneAt["b5"].Before(doneAt["poison"]) {
		t.Fatalf("other partition waited for the poison message: b5 at %v, last poison attempt at %v", doneAt["b5"], doneAt["poison"])
	}
	mu.Unlock()

	p := jetstreamtest.StreamMsgs(t, env.js, "POISON")[0]
	if p.Subject != "edi.poison.parse" || string(p.Data) != "poison" {
		t.Fatalf("poison copy: %s %q", p.Subject, p.Data)
	}
	want := map[string]string{
		wire.HdrPoisonCause: "panic", wire.HdrAttempts: "3", wire.HdrOriginalTopic: "edi.ingest." + a, wire.HdrOriginalStream: "INGEST",
		wire.HdrOriginalSeq: "2", wire.HdrPartnerID: a, wire.HdrErrorClass: "unclassified", wire.HdrStage: "parse",
		wire.HdrMsgID: "INGEST:2:poison",
	}
	for k, v := range want {
		if got := p.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{wire.HdrDetectedAt, wire.HdrErrorMsg, wire.HdrCorrelationID, wire.HdrFirstFailedAt, wire.HdrFingerprint} {
		if p.Header.Get(k) == "" {
			t.Errorf("header %s missing", k)
		}
	}
	if n, _ := env.store.Len(); n != 0 {
		t.Fatalf("%d attempt records left after quarantine", n)
	}
	// the quarantine is audited, and the chain verifies
	events := jetstreamtest.StreamMsgs(t, env.js, "AUDIT")
	if len(events) != 1 {
		t.Fatalf("%d audit events, want 1", len(events))
	}
}

// Test 3: a crash between the quarantine jetstreamtest.PublishIngest and the ack of the
// original: the restarted hub publishes again and the server drops the
// duplicate.
func TestCrashBetweenQuarantinePublishAndAck(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	store := t.TempDir() + "/counter.db"
	cfg := fastConfig()
	cfg.Attempts.Threshold = 2
	boom := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error { panic("boom") }}
	var crashed atomic.Bool
	var first *testEnv
	first = startHub(t, url, store, cfg, []Stage{boom}, func(o *Options) {
		o.testHooks.afterQuarantinePublish = func(uint64) {
			crashed.Store(true)
			o.Conn.Close() // the process "dies": its ack never reaches the server
		}
	})
	jetstreamtest.PublishIngest(t, first.js, "ACME", "poison", nil)
	jetstreamtest.Eventually(t, 10*time.Second, crashed.Load)
	first.stop()

	second := startHub(t, url, store, cfg, []Stage{boom}, nil)
	// the original is redelivered after AckWait and quarantined again
	jetstreamtest.Eventually(t, 15*time.Second, func() bool {
		c, err := second.js.Consumer(context.Background(), "INGEST", "ingest-p"+strconv.Itoa(wire.PartitionOf("ACME", cfg.Partitions)))
		if err != nil {
			return false
		}
		info, err := c.Info(context.Background())
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0 && info.AckFloor.Stream == 1
	})
	if n := jetstreamtest.CountMsgs(t, second.js, "POISON"); n != 1 {
		t.Fatalf("POISON holds %d copies, want 1", n)
	}
	if got := testCounter(t, second, "edihub_publish_duplicates_total"); got < 1 {
		t.Fatalf("the re-jetstreamtest.PublishIngest was not recognised as a duplicate (duplicates metric %v)", got)
	}
}

// Test 4 (hub side): a re-created consumer starts counting deliveries at
// 1 again, but the attempt records survive in the store and still count.
func TestRecordsOutliveRestartAndRecreatedConsumer(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	store := t.TempDir() + "/counter.db"
	cfg := fastConfig()
	cfg.Attempts.Threshold = 4
	cfg.Attempts.BackoffBase = 3 * time.Second // keeps attempt 3 away while we restart
	cfg.Attempts.BackoffMax = 4 * time.Second
	var calls atomic.Int32
	boom := Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		calls.Add(1)
		panic("same panic")
	}}
	env := startHub(t, url, store, cfg, []Stage{boom}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "poison", nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { n, _ := env.store.Len(); return n == 1 && calls.Load() == 2 })
	env.stop()
	consumer := "ingest-p" + strconv.Itoa(wire.PartitionOf("ACME", cfg.Partitions))
	nc, j, err := ejs.Connect(url, "admin")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := j.DeleteConsumer(context.Background(), "INGEST", consumer); err != nil {
		t.Fatal(err)
	}

	cfg.Attempts.BackoffBase, cfg.Attempts.BackoffMax = 10*time.Millisecond, 20*time.Millisecond
	calls.Store(0)
	env2 := startHub(t, url, store, cfg, []Stage{boom}, nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env2.js, "POISON") == 1 })
	if n := calls.Load(); n != 2 {
		t.Fatalf("after restart the handler ran %d times, want 2 (threshold 4 minus the 2 recorded)", n)
	}
	if got := jetstreamtest.StreamMsgs(t, env2.js, "POISON")[0].Header.Get(wire.HdrAttempts); got != "4" {
		t.Fatalf("x-attempts = %s, want 4", got)
	}
}

func TestCheckAttempts(t *testing.T) {
	cases := []struct {
		delivered   uint64
		rec         counter.Record
		poison      bool
		unexplained int
		cause       string
	}{
		{1, counter.Record{}, false, 0, ""},
		{6, counter.Record{}, false, 5, ""},                       // five deaths, none attributed: neighbours of a killer
		{7, counter.Record{SoloRuns: 5}, true, 6, "process-died"}, // died alone five times
		{6, counter.Record{SoloRuns: 4}, false, 5, ""},            // four: not yet
		{2, counter.Record{SoloRuns: 5}, true, 5, "process-died"}, // the server lost its count in the crashes; ours did not
		{1, records(5, counter.KindPanic, "p"), true, 0, "panic"}, // re-created consumer: the record wins
		{6, records(5, counter.KindTimeout, "t"), true, 0, "timeout"},
		{6, withSolo(records(4, counter.KindPanic, "p"), 1), true, 1, "process-died"},
		{6, recordsClass(5, "transient", "x"), false, 0, ""}, // typed transient: the retry policy decides
		{6, recordsClass(5, "unclassified", "x"), true, 0, "repeated-failure"},
		{6, mixed(), false, 0, ""}, // unclassified, varying fingerprints
	}
	for i, c := range cases {
		v := checkAttempts(c.delivered, c.rec, 5)
		if v.poison != c.poison || v.unexplained != c.unexplained || v.cause != c.cause {
			t.Errorf("case %d: got poison=%v unexplained=%d cause=%q", i, v.poison, v.unexplained, v.cause)
		}
	}
}

func records(n int, kind counter.Kind, fp string) counter.Record {
	var r counter.Record
	for i := 0; i < n; i++ {
		r.Count++
		r.Failures = append(r.Failures, counter.Failure{Kind: kind, Class: "unclassified", Fingerprint: fp, Stage: "parse"})
	}
	return r
}

func recordsClass(n int, class, fp string) counter.Record {
	r := records(n, counter.KindError, fp)
	for i := range r.Failures {
		r.Failures[i].Class = class
	}
	return r
}

func mixed() counter.Record {
	r := recordsClass(5, "unclassified", "x")
	r.Failures[4].Fingerprint = "y"
	return r
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func withSolo(r counter.Record, runs int) counter.Record {
	r.SoloRuns += runs
	return r
}

// A quarantine copy names its interchange by the stage's ControlRef when
// the stage never read it (it panicked first).
func TestQuarantineCopyNamesTheInterchangeByTheStage(t *testing.T) {
	stage := echoStage("parse", func(*Message) error { panic("boom") })
	stage.ControlRef = func(p []byte) string { return "REF-" + string(p) }
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", fastConfig(), []Stage{stage}, nil)
	jetstreamtest.PublishIngest(t, env.js, "ACME", "9", nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "POISON") == 1 })
	if got := jetstreamtest.StreamMsgs(t, env.js, "POISON")[0].Header.Get(wire.HdrMessageID); got != "REF-9" {
		t.Fatalf("x-message-id %q, want REF-9", got)
	}
}

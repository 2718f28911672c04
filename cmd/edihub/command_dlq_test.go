package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/edihub/edihub/edifact/edifacttest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/app"
	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/wire"
)

// dlqHub is the application run in-process (app.New, as serve runs it):
// a real embedded server, the parse stage with a real KV ledger, and a
// validate stage after it that fails with a business error while
// failValidate is set.
type dlqHub struct {
	url          string
	js           js.JetStream
	failValidate *atomic.Bool
	ledger       *ledger.KVStore
}

func startDLQHub(t *testing.T) *dlqHub {
	t.Helper()
	fail := &atomic.Bool{}
	validate := hub.Stage{Name: "validate", Handle: func(ctx context.Context, m *hub.Message) error {
		if fail.Load() {
			return hub.PermanentError(wire.CauseBusiness, errors.New("unknown article 4711"))
		}
		return nil
	}}
	a := startApp(t, func(c *app.Config) {
		c.Hub.Partitions = 2
		c.Hub.Attempts.AckWait = time.Second
		c.Hub.DuplicateWindow = time.Minute
	}, &app.Env{Stages: []hub.Stage{validate}})
	_, j := jetstreamtest.Connect(t, a.NATSURL())
	return &dlqHub{url: a.NATSURL(), js: j, failValidate: fail, ledger: a.Ledger()}
}

func (d *dlqHub) publish(t *testing.T, partner, data string) {
	t.Helper()
	if _, err := d.js.PublishMsg(context.Background(), &nats.Msg{Subject: wire.IngestSubject(partner), Data: []byte(data)}); err != nil {
		t.Fatal(err)
	}
}

func (d *dlqHub) count(t *testing.T, stream string) int {
	t.Helper()
	s, err := d.js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(info.State.Msgs)
}

func (d *dlqHub) waitDLQ(t *testing.T, n int) {
	t.Helper()
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return d.count(t, "DLQ") == n })
}

// dlq runs `edihub <args> --server URL` in-process as user alice.
func (d *dlqHub) cmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string {
			return map[string]string{"USER": "alice", "EDITOR": os.Getenv("TEST_EDITOR"), audit.KeyEnv: testAuditKey}[k]
		}}
	code = run(context.Background(), e, append(args, "--server", d.url))
	return out.String(), errb.String(), code
}

// hostilePayload tries to take over the operator's terminal.
const hostilePayload = "UNB+UNOC:3+\x1b]0;pwned\x07+\x1b[2J\x1b[31mroot#\x00\x00\x9b6n\u202e'\x1b[0m"

func TestDLQLsInspectShow(t *testing.T) {
	d := startDLQHub(t)
	d.failValidate.Store(true)
	// one at a time: partners run side by side, and DLQ:n names the n-th
	// stored
	d.publish(t, "ACME", hostilePayload)
	d.waitDLQ(t, 1)
	d.publish(t, "ACME", edifacttest.Invoice("R1"))
	d.waitDLQ(t, 2)
	d.publish(t, "BETA", edifacttest.Invoice("R2"))
	d.waitDLQ(t, 3)

	out, errOut, code := d.cmd(t, "dlq", "ls")
	if code != 0 || !strings.Contains(out, "dlq   parse     schema") || !strings.Contains(out, "dlq, parking 0, poison 0") && !strings.Contains(out, "dlq 3, parking 0, poison 0") {
		t.Fatalf("ls: %d %s %s", code, out, errOut)
	}
	out, _, code = d.cmd(t, "dlq", "ls", "--json")
	var sum ops.Summary
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.Totals["dlq"] != 3 || len(sum.Rows) != 3 {
		t.Fatalf("ls --json: %d %s", code, out)
	}
	out, _, code = d.cmd(t, "dlq", "inspect", "--cause", "business", "--since", "1h")
	if code != 0 || !strings.Contains(out, "DLQ:2") || !strings.Contains(out, "DLQ:3") || strings.Contains(out, "DLQ:1 ") ||
		!strings.Contains(out, "unknown article 4711") || !strings.Contains(out, "2 message(s)") {
		t.Fatalf("inspect: %d\n%s", code, out)
	}
	out, _, code = d.cmd(t, "dlq", "inspect", "--group", "--filter", "stage=validate")
	if code != 0 || !strings.Contains(out, "DLQ:2 DLQ:3") {
		t.Fatalf("inspect --group: %d\n%s", code, out)
	}
	out, _, code = d.cmd(t, "dlq", "inspect", "--group", "--json", "--partner", "BETA")
	var groups struct{ Groups []ops.Group }
	if code != 0 || json.Unmarshal([]byte(out), &groups) != nil || len(groups.Groups) != 1 || groups.Groups[0].Count != 1 {
		t.Fatalf("inspect --group --json: %d %s", code, out)
	}

	// The hostile payload is shown escaped: no ESC, BEL, NUL or C1 byte
	// reaches the terminal.
	out, _, code = d.cmd(t, "dlq", "show", "DLQ:1")
	if code != 0 {
		t.Fatalf("show: %d %s", code, out)
	}
	if strings.ContainsAny(out, "\x1b\x07\x00") || strings.Contains(out, "\x9b") || strings.Contains(out, "\u202e") {
		t.Fatalf("show wrote raw control bytes:\n%q", out)
	}
	for _, want := range []string{`\x1B]0;pwned\x07`, `\x00\x00`, `\x9B6n`, `\xE2\x80\xAE`, "reader stopped", "x-error-class:", "sha256 "} {
		if !strings.Contains(out, want) {
			t.Fatalf("show lacks %q:\n%s", want, out)
		}
	}
	out, _, code = d.cmd(t, "dlq", "show", "DLQ:2")
	if code != 0 || !strings.Contains(out, "    2 @33      UNB+UNOC:3+SENDER1:14") && !strings.Contains(out, "UNB+UNOC:3+SENDER1:14+RECEIVER1:14+261130:1200+R1'") {
		t.Fatalf("show segments: %s", out)
	}
	out, _, code = d.cmd(t, "dlq", "show", "DLQ:2", "--json")
	var sr ops.ShowResult
	if code != 0 || json.Unmarshal([]byte(out), &sr) != nil || string(sr.Payload) != edifacttest.Invoice("R1") || len(sr.Segments.Lines) != 5 {
		t.Fatalf("show --json: %d %s", code, out)
	}
	out, _, _ = d.cmd(t, "audit", "ls", "--all")
	if strings.Count(out, "alice") != 3 || !strings.Contains(out, "show") {
		t.Fatalf("shows not audited:\n%s", out)
	}
	if out, _, _ = d.cmd(t, "audit", "ls"); strings.Contains(out, "show") {
		t.Fatalf("page views listed without --all:\n%s", out)
	}

	// Exit codes scripts can trust.
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"dlq", "show", "DLQ:99"}, 1},
		{[]string{"dlq", "show", "FOO:1"}, 2},
		{[]string{"dlq", "show"}, 2},
		{[]string{"dlq", "frobnicate"}, 2},
		{[]string{"dlq", "inspect", "--since", "yesterday"}, 2},
	} {
		if _, _, code := d.cmd(t, c.args...); code != c.code {
			t.Fatalf("%v: exit %d, want %d", c.args, code, c.code)
		}
	}
	var out2, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out2, stderr: &errb, getenv: func(string) string { return "" }}
	if code := run(context.Background(), e, []string{"dlq", "ls", "--server", "nats://127.0.0.1:1"}); code != 2 {
		t.Fatalf("unreachable hub: exit %d", code)
	}
}

// testClock replaces the replay clock: Sleep advances it.
type testClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func useTestClock(t *testing.T) *testClock {
	c := &testClock{now: time.Now()}
	old := opsClock
	opsClock.now = func() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
	opsClock.sleep = func(d time.Duration) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.now = c.now.Add(d)
		c.sleeps = append(c.sleeps, d)
	}
	t.Cleanup(func() { opsClock = old })
	return c
}

func TestDLQReplayRateMaxAndDryRun(t *testing.T) {
	d := startDLQHub(t)
	clock := useTestClock(t)
	d.failValidate.Store(true)
	for _, r := range []string{"A1", "A2", "A3", "A4"} {
		d.publish(t, "ACME", edifacttest.Invoice(r))
	}
	d.waitDLQ(t, 4)
	d.failValidate.Store(false)

	// Dry-run changes nothing, not even the audit trail.
	auditBefore := d.count(t, "AUDIT")
	out, _, code := d.cmd(t, "dlq", "replay", "--filter", "partner=ACME", "--dry-run")
	if code != 0 || strings.Count(out, "would be parsed into 1 message(s)") != 4 || !strings.Contains(out, "interchange SENDER1 → RECEIVER1 #A1") {
		t.Fatalf("dry-run: %d\n%s", code, out)
	}
	if d.count(t, "DLQ") != 4 || d.count(t, "INGEST") != 4 || d.count(t, "AUDIT") != auditBefore || len(clock.sleeps) != 0 {
		t.Fatal("dry-run changed something")
	}

	for _, bad := range [][]string{
		{"dlq", "replay"},
		{"dlq", "replay", "--filter", "partner=ACME", "--max", "0"},
		{"dlq", "replay", "--filter", "partner=ACME", "--rate", "fast"},
		{"dlq", "replay", "DLQ:1", "--filter", "partner=ACME"},
		{"dlq", "replay", "DLQ:1", "--force"},
		{"dlq", "replay", "--filter", ""},
		{"dlq", "replay", "DLQ:1", "--outcome", "-1s"},
	} {
		if _, _, code := d.cmd(t, bad...); code != 2 {
			t.Fatalf("%v: exit %d, want 2", bad, code)
		}
	}

	out, _, code = d.cmd(t, "dlq", "replay", "--filter", "partner=ACME", "--rate", "4/s", "--max", "3")
	if code != 0 || strings.Count(out, "replayed as INGEST:") != 3 || !strings.Contains(out, "1 more match") {
		t.Fatalf("replay: %d\n%s", code, out)
	}
	var total time.Duration
	for _, s := range clock.sleeps {
		total += s
	}
	if len(clock.sleeps) != 2 || total != 500*time.Millisecond {
		t.Fatalf("--rate 4/s for 3 messages: slept %v (%v), want 2 × 250ms", clock.sleeps, total)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return d.count(t, "PARSED") == 3 })
	if n := d.count(t, "DLQ"); n != 1 {
		t.Fatalf("DLQ has %d, want 1 left over --max", n)
	}
	out, _, code = d.cmd(t, "dlq", "replay", "DLQ:1", "--json")
	var rep ops.ReplayReport
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || rep.Items[0].Outcome != ops.OutcomeSkipped {
		t.Fatalf("replay of a replayed ID: %d %s", code, out)
	}
	// --json: each message's outcome as the streams say it, and the batch.
	out, _, code = d.cmd(t, "dlq", "replay", "--filter", "partner=ACME", "--json")
	rep = ops.ReplayReport{}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Items) != 1 || rep.Items[0].Outcome != ops.OutcomeParsed ||
		len(rep.Items[0].Subjects) == 0 || rep.Batch == "" || rep.Tally[ops.OutcomeParsed] != 1 {
		t.Fatalf("replay --json outcome: %d %s", code, out)
	}
}

// A replay of an interchange the ledger has seen is acked as a duplicate
// and not processed twice; --force --reason overrides and is audited.
func TestDLQReplayedDuplicateNotProcessedTwice(t *testing.T) {
	d := startDLQHub(t)
	d.failValidate.Store(true)
	d.publish(t, "ACME", edifacttest.Invoice("DUP"))
	d.publish(t, "ACME", edifacttest.Invoice("DUP"))
	d.waitDLQ(t, 2)
	d.failValidate.Store(false)
	d.publish(t, "ACME", edifacttest.Invoice("DUP")) // the partner retransmits; it goes through
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return d.count(t, "PARSED") == 1 })
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { // recorded right after the ack
		seen, _ := d.ledger.Seen(ledger.Key{Partner: "ACME", Sender: "SENDER1", Recipient: "RECEIVER1", ControlRef: "DUP"})
		return seen
	})
	if _, _, code := d.cmd(t, "dlq", "replay", "DLQ:1"); code != 0 {
		t.Fatalf("replay: %d", code)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		out, _, _ := d.cmd(t, "audit", "ls")
		return strings.Contains(out, "duplicate-skipped")
	})
	if n := d.count(t, "PARSED"); n != 1 {
		t.Fatalf("the duplicate was processed: PARSED has %d", n)
	}
	if _, _, code := d.cmd(t, "dlq", "replay", "DLQ:2", "--force", "--reason", "partner asked to re-book"); code != 0 {
		t.Fatalf("forced replay: %d", code)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return d.count(t, "PARSED") == 2 })
	out, _, _ := d.cmd(t, "audit", "ls", "--json")
	if !strings.Contains(out, `"reason":"partner asked to re-book"`) || !strings.Contains(out, `"force":"true"`) {
		t.Fatalf("forced replay not audited with its reason: %s", out)
	}
	// What people did, without the hub's own events; by action; by message.
	out, _, _ = d.cmd(t, "audit", "ls", "--human")
	if strings.Contains(out, "duplicate-skipped") || !strings.Contains(out, "replay") {
		t.Fatalf("audit ls --human:\n%s", out)
	}
	out, _, _ = d.cmd(t, "audit", "ls", "--action", "duplicate-skipped")
	if strings.Contains(out, " replay ") || !strings.Contains(out, "duplicate-skipped") {
		t.Fatalf("audit ls --action duplicate-skipped:\n%s", out)
	}
	if out, _, _ = d.cmd(t, "audit", "ls", "--message", "DLQ:2"); !strings.Contains(out, "partner asked to re-book") || strings.Contains(out, "DLQ:1 ") {
		t.Fatalf("audit ls --message DLQ:2:\n%s", out)
	}
}

func TestDLQParkDropEdit(t *testing.T) {
	d := startDLQHub(t)
	broken := strings.Replace(edifacttest.Invoice("E1"), "UNT+3+1", "UNT+9+1", 1)
	d.publish(t, "ACME", "junk")
	d.publish(t, "ACME", "more junk")
	d.publish(t, "ACME", broken)
	d.waitDLQ(t, 3)

	// drop without a reason is refused
	if _, errOut, code := d.cmd(t, "dlq", "drop", "DLQ:1"); code != 2 || !strings.Contains(errOut, "--reason is required") {
		t.Fatalf("drop without reason: %d %s", code, errOut)
	}
	if out, _, code := d.cmd(t, "dlq", "drop", "DLQ:1", "--reason", "onboarding garbage"); code != 0 || !strings.Contains(out, "DLQ:1  dropped") {
		t.Fatalf("drop: %d %s", code, out)
	}
	if out, _, code := d.cmd(t, "dlq", "park", "DLQ:2", "--reason", "ask partner"); code != 0 || !strings.Contains(out, "DLQ:2  parked → PARKING:1") {
		t.Fatalf("park: %d %s", code, out)
	}
	if _, _, code := d.cmd(t, "dlq", "park", "DLQ:2"); code != 1 {
		t.Fatalf("park of a gone message: %d", code)
	}

	// edit keeps both versions; only the edited one is replayed
	fixed := filepath.Join(t.TempDir(), "fixed.edi")
	if err := os.WriteFile(fixed, []byte(edifacttest.Invoice("E1")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := d.cmd(t, "dlq", "edit", "DLQ:3", "--from-file", fixed, "--reason", "UNT count")
	if code != 0 || !strings.Contains(out, "DLQ:3 edited into DLQ:4") {
		t.Fatalf("edit: %d %s", code, out)
	}
	if _, _, code := d.cmd(t, "dlq", "edit", "DLQ:4", "--from-file", fixed); code != 1 {
		t.Fatalf("unchanged edit: %d", code)
	}
	out, _, _ = d.cmd(t, "dlq", "inspect", "--superseded")
	if !strings.Contains(out, "(superseded by DLQ:4)") || !strings.Contains(out, "(edit of DLQ:3)") {
		t.Fatalf("inspect after edit:\n%s", out)
	}
	out, _, code = d.cmd(t, "dlq", "replay", "--filter", "kind=dlq")
	if code != 0 || !strings.Contains(out, "DLQ:4 → edi.ingest.ACME: replayed") || strings.Contains(out, "DLQ:3") {
		t.Fatalf("filter replay after edit: %d\n%s", code, out)
	}
	// followed to its outcome (--outcome's default wait)
	if !strings.Contains(out, " — parsed → edi.parsed.") || !strings.Contains(out, ": 1 parsed (later: edihub dlq replays R-") {
		t.Fatalf("replay's outcome:\n%s", out)
	}
	if out, _, code := d.cmd(t, "dlq", "replays"); code != 0 || !strings.Contains(out, "by alice  1 message(s): 1 parsed") {
		t.Fatalf("dlq replays: %d\n%s", code, out)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return d.count(t, "PARSED") == 1 })
	// The original is done, not waiting: replaying it again sends nothing
	// and is no failure; show says where its edit went.
	if out, _, code := d.cmd(t, "dlq", "replay", "DLQ:3"); code != 0 || !strings.Contains(out, "DLQ:3 (its edit DLQ:4): already replayed as INGEST:") ||
		!strings.Contains(out, "already replayed 1") {
		t.Fatalf("replay of the edited original: %d %s", code, out)
	}
	out, _, _ = d.cmd(t, "dlq", "show", "DLQ:3", "--raw")
	if !strings.Contains(out, "UNT+9+1") {
		t.Fatalf("the original is not kept: %s", out)
	}
	if !strings.Contains(out, "done: its edit DLQ:4 was replayed as INGEST:") || strings.Contains(out, "replaying DLQ:3 sends the edit") {
		t.Fatalf("show of the edited original after its edit went back:\n%s", out)
	}
	if out, _, _ := d.cmd(t, "dlq", "inspect", "--superseded"); !strings.Contains(out, "(its edit DLQ:4 was replayed as INGEST:") {
		t.Fatalf("inspect of the edited original after its edit went back:\n%s", out)
	}
	jetstreamtest.Settle(t, d.js, 10*time.Second, "INGEST", "RETRY", "PARSED") // nothing else may arrive
	if n := d.count(t, "PARSED"); n != 1 {
		t.Fatalf("PARSED has %d: both versions were processed", n)
	}

	// $EDITOR path: a script edits the parked message in place
	script := filepath.Join(t.TempDir(), "ed.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf 'edited by script' > \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_EDITOR", script)
	// the check (dlq replay --dry-run's decision) refuses the garbage it saved
	if out, errOut, code := d.cmd(t, "dlq", "edit", "PARKING:1"); code != 1 || !strings.Contains(errOut, "would be dead-lettered again (schema)") ||
		!strings.Contains(errOut, "nothing stored") || !strings.Contains(errOut, "--force") {
		t.Fatalf("garbage edit with $EDITOR: %d %s %s", code, out, errOut)
	}
	if out, errOut, code := d.cmd(t, "dlq", "edit", "PARKING:1", "--force"); code != 0 || !strings.Contains(out, "PARKING:1 edited into PARKING:2") ||
		!strings.Contains(errOut, "warning: the edit would be dead-lettered again") {
		t.Fatalf("forced edit with $EDITOR: %d %s %s", code, out, errOut)
	}

	out, _, code = d.cmd(t, "audit", "ls")
	for _, a := range []string{"drop", "park", "edit", "replay", "onboarding garbage", "UNT count"} {
		if !strings.Contains(out, a) {
			t.Fatalf("audit lacks %q:\n%s", a, out)
		}
	}
	if out, _, code := d.cmd(t, "audit", "verify"); code != 0 || !strings.Contains(out, "audit chain intact") {
		t.Fatalf("verify: %d %s", code, out)
	}
	if _, errOut, code := d.cmd(t, "audit", "verify", "--anchor", "0123abcd0123abcd"); code != 2 || !strings.Contains(errOut, "anchor 0123abcd0123abcd not found") {
		t.Fatalf("verify with a foreign anchor: %d %s", code, errOut)
	}
	if _, errOut, code := d.cmd(t, "audit", "verify", "--anchor", "0123"); code != 2 || !strings.Contains(errOut, "at least 12 hex digits") {
		t.Fatalf("verify with a short anchor: %d %s", code, errOut)
	}
}

// testAuditKey is the hub's audit key in these tests, given to the CLI as
// $EDIHUB_AUDIT_KEY.
const testAuditKey = "6564696875622d746573742d61756469742d6b65792d3031323334353637383930"

func testAuditKeyring(t *testing.T) *audit.Keyring {
	t.Helper()
	b, err := audit.ParseKey(testAuditKey)
	if err != nil {
		t.Fatal(err)
	}
	k, err := audit.NewKeyring(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/edihub/edihub/edifact/edifacttest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub/forensics"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := run(context.Background(), e, args)
	return out.String(), errb.String(), code
}

// runKeyed is runCmd with the hub's audit key ($EDIHUB_AUDIT_KEY), for
// the commands that append audit events (they refuse without it).
func runKeyed(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return map[string]string{audit.KeyEnv: testAuditKey}[k] }}
	code := run(context.Background(), e, args)
	return out.String(), errb.String(), code
}

// The poison commands against a real server and a real worker whose
// children are `edihub sandbox exec` (this binary, via TestMain).
func TestPoisonCommands(t *testing.T) {
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: t.TempDir()})
	url := srv.ClientURL()
	nc, j, err := ejs.Connect(url, "poison-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, subj := range map[string]string{"POISON": "edi.poison.>", "AUDIT": "edi.audit.>"} {
		if _, err := j.CreateStream(ctx, js.StreamConfig{Name: name, Subjects: []string{subj}, Storage: js.FileStorage}); err != nil {
			t.Fatal(err)
		}
	}
	if out, _, code := runCmd(t, "poison", "ls", "--server", url); code != 0 || !strings.Contains(out, "no quarantined messages") {
		t.Fatalf("empty ls: %d %q", code, out)
	}
	defer runForensics(t, ctx, cancel, nc)()

	// A hostile payload: a terminal escape in the middle of a segment.
	payload := "UNA:+.? 'UNB+UNOC:3+S:ZZZ+R:ZZZ+261130:1200+EVIL1'UNH+1+INVOIC:D:96A:UN'BGM+380+\x1b]0;pwned\x07\x1b[2J+9'UNT+3+1'UNZ+1+EVIL1'"
	publishPoison(t, ctx, j, "7", "bad \x1b[31m", []byte(payload))
	var out string
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		out, _, _ = runCmd(t, "poison", "ls", "--server", url)
		return strings.Contains(out, "reproduced-error")
	})
	if !strings.Contains(out, "POISON:1") || !strings.Contains(out, "T-INGEST-7") || !strings.Contains(out, "open") {
		t.Fatalf("ls:\n%s", out)
	}

	out, errOut, code := runCmd(t, "poison", "show", "POISON:1", "--server", url)
	if code != 0 {
		t.Fatalf("show: %d %s", code, errOut)
	}
	if strings.ContainsAny(out, "\x1b\x07\x00") {
		t.Fatalf("show printed raw control bytes:\n%q", out)
	}
	for _, want := range []string{`BGM+380+\x1B]0;pwned\x07\x1B[2J+9'`, "    2 @50      UNH+1+INVOIC", "outcome   reproduced-error", "exit code 10 (the analysis returned an error)", `x-error-msg: bad \x1B[31m`, "ticket  T-INGEST-7: open"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if v, hd := strings.Index(out, "verdict   reproduced"), strings.Index(out, "headers of the poison copy"); v < 0 || hd < v {
		t.Errorf("show: the verdict (at %d) must come first and the headers (at %d) after the report:\n%s", v, hd, out)
	}
	out, _, _ = runCmd(t, "poison", "show", "POISON:1", "--json", "--server", url)
	var shown poisonShow
	if err := json.Unmarshal([]byte(out), &shown); err != nil || string(shown.Payload) != payload || shown.Report.Key != "INGEST/7" || len(shown.Segments.Lines) != 2 {
		t.Fatalf("show --json: %v %+v", err, shown.Report)
	}

	if _, errOut, code := runKeyed(t, "poison", "ticket", "ack", "POISON:1", "--server", url); code != 2 || !strings.Contains(errOut, "--note") {
		t.Fatalf("ack without note: %d %s", code, errOut)
	}
	out, _, code = runKeyed(t, "poison", "ticket", "ack", "POISON:1", "--note", "on it", "--actor", "alice", "--server", url)
	if code != 0 || !strings.Contains(out, "is acked") {
		t.Fatalf("ack: %d %s", code, out)
	}
	if _, errOut, code := runKeyed(t, "poison", "ticket", "ack", "POISON:1", "--note", "again", "--server", url); code != 1 {
		t.Fatalf("second ack: %d %s", code, errOut)
	}
	out, errOut, code = runKeyed(t, "poison", "reanalyse", "POISON:1", "--server", url)
	if code != 0 || !strings.Contains(out, "2 times") || !strings.Contains(errOut, "analysing POISON:1 in the sandbox (caps: 30s CPU, 256MiB memory, 35s wall)") {
		t.Fatalf("reanalyse: %d %s %s", code, out, errOut)
	}
	out, _, code = runKeyed(t, "poison", "ticket", "close", "T-INGEST-7", "--note", "partner fixed it", "--actor", "bob", "--server", url)
	if code != 0 || !strings.Contains(out, "closed") {
		t.Fatalf("close: %d %s", code, out)
	}
	if _, _, code := runCmd(t, "poison", "show", "POISON:42", "--server", url); code != 1 {
		t.Fatalf("unknown ID: exit %d, want 1", code)
	}
	if _, _, code := runCmd(t, "poison", "ls", "--server", "nats://127.0.0.1:1"); code != 2 {
		t.Fatalf("unreachable: exit %d, want 2", code)
	}
	if _, _, code := runCmd(t, "poison", "frobnicate"); code != 2 {
		t.Fatalf("bad usage: exit %d, want 2", code)
	}
}

// After `dlq replay POISON:n --allow-poison` the copy is gone from POISON
// but its report stays: poison ls says where it went and when it was
// quarantined, not "copy aged out" with a zero time.
func TestPoisonReplayedIsNotAgedOut(t *testing.T) {
	d := startDLQHub(t)
	nc, j, err := ejs.Connect(d.url, "poison-replay-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer runForensics(t, ctx, cancel, nc)()

	publishPoison(t, ctx, j, "9", "panic", []byte(edifacttest.Invoice("P1")))
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		out, _, _ := d.cmd(t, "poison", "ls")
		return strings.Contains(out, "T-INGEST-9")
	})
	out, errOut, code := d.cmd(t, "dlq", "replay", "POISON:1", "--allow-poison", "--to", wire.IngestSubject("ACME"))
	if code != 0 || !strings.Contains(out, "replayed as INGEST:") || errOut != "" {
		t.Fatalf("replay: %d\n%s%s", code, out, errOut)
	}
	out, _, _ = d.cmd(t, "poison", "ls")
	if !strings.Contains(out, "(replayed as INGEST:1)") || strings.Contains(out, "aged out") || strings.Contains(out, "  -  ") {
		t.Fatalf("poison ls after the replay:\n%s", out)
	}
	out, _, _ = d.cmd(t, "poison", "ls", "--json")
	var list []forensics.PoisonEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].QuarantinedAt.IsZero() || list[0].ReplayedAs != "INGEST:1" || list[0].InStream ||
		list[0].Bytes != len(edifacttest.Invoice("P1")) {
		t.Fatalf("poison ls --json: %v\n%s", err, out)
	}
}

// poison show prints the report as fields, the stack as lines (tabs and
// line breaks kept, never as \n or \t), and the headers after both.
func TestPrintReportReadable(t *testing.T) {
	r := &forensics.Report{ID: "POISON:2", Key: "INGEST/5", Verdict: "panic reproduced in isolation: a bug in the stage; the stack shows where",
		Partner: "ACME", Stage: "parse", Headers: map[string][]string{"x-stage": {"parse"}},
		Sandbox: &sandbox.Report{Outcome: sandbox.OutcomePanic, PanicValue: "index out of range [3] with length 3", ExitCode: 11,
			Stack: "goroutine 1 [running]:\nedifact.(*Reader).Read()\n\t/src/edifact/reader.go:120 +0x1d\x1b[2J\n"}}
	var b bytes.Buffer
	printReport(&b, r, nil)
	out := b.String()
	for _, want := range []string{"verdict   panic reproduced", "panic     index out of range [3] with length 3", "signal    none",
		"\nstack\n  goroutine 1 [running]:\n  edifact.(*Reader).Read()\n  \t/src/edifact/reader.go:120 +0x1d\\x1B[2J\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, `\n`) || strings.Contains(out, `\t`) {
		t.Errorf("report shows raw control bytes or escaped line breaks:\n%s", out)
	}
	if v, st, hd := strings.Index(out, "verdict"), strings.Index(out, "\nstack\n"), strings.Index(out, "headers of the poison copy"); !(v < st && st < hd) {
		t.Errorf("order: verdict %d, stack %d, headers %d; want the report, the stack, then the headers:\n%s", v, st, hd, out)
	}
}

// runForensics runs a forensics worker on nc until the returned func,
// which cancels ctx (through cancel) and waits for the worker.
func runForensics(t *testing.T, ctx context.Context, cancel context.CancelFunc, nc *nats.Conn) func() {
	t.Helper()
	return runForensicsKeyed(t, ctx, cancel, nc, nil)
}

// runForensicsKeyed runs the worker with the hub's audit keys: it reads
// the upload a copy announces only when the copy's x-hub-mac verifies.
func runForensicsKeyed(t *testing.T, ctx context.Context, cancel context.CancelFunc, nc *nats.Conn, keys *audit.Keyring) func() {
	t.Helper()
	f, err := forensics.New(forensics.Options{Conn: nc, Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel),
		Registry: prometheus.NewRegistry(), Config: forensics.Config{CPULimit: 2 * time.Second}, Keyring: keys})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = f.Run(ctx) }()
	return func() { cancel(); <-done }
}

// publishPoison stores a quarantined copy of partner ACME's INGEST:seq in
// POISON, with the headers the hub's quarantine writes (and extra ones,
// as the message's own).
func publishPoison(t *testing.T, ctx context.Context, j js.JetStream, seq, errMsg string, payload []byte, extra ...nats.Header) {
	t.Helper()
	publishPoisonSigned(t, ctx, j, nil, seq, errMsg, payload, extra...)
}

// publishPoisonSigned is publishPoison with the hub's x-hub-mac made with
// keys (nil: none).
func publishPoisonSigned(t *testing.T, ctx context.Context, j js.JetStream, keys *audit.Keyring, seq, errMsg string, payload []byte, extra ...nats.Header) {
	t.Helper()
	h := nats.Header{}
	for k, v := range map[string]string{wire.HdrOriginalStream: "INGEST", wire.HdrOriginalSeq: seq, wire.HdrPartnerID: "ACME",
		wire.HdrStage: "parse", wire.HdrErrorMsg: errMsg, wire.HdrDetectedAt: time.Now().UTC().Format(time.RFC3339Nano)} {
		h.Set(k, v)
	}
	for _, x := range extra {
		for k, v := range x {
			h[k] = v
		}
	}
	audit.SignCopy(keys, h, payload)
	if _, err := j.PublishMsg(ctx, &nats.Msg{Subject: wire.PoisonSubject("parse"), Header: h, Data: payload}); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/edifact/edifacttest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// writeInterchanges writes n distinct interchanges and returns their paths.
func writeInterchanges(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i := range n {
		f := filepath.Join(dir, fmt.Sprintf("f%03d.edi", i))
		if err := os.WriteFile(f, []byte(edifacttest.Invoice(fmt.Sprintf("R%03d", i))), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// ingestServer is an embedded server with an INGEST stream (the hub's
// subjects and a duplicate window), no hub: send's part alone.
func ingestServer(t *testing.T, o *jetstreamtest.Options) *jetstreamtest.Server {
	t.Helper()
	srv := jetstreamtest.StartServer(t, o)
	_, j := jetstreamtest.Connect(t, srv.URL)
	if _, err := j.CreateOrUpdateStream(context.Background(), js.StreamConfig{Name: "INGEST", Subjects: []string{wire.IngestWildcard},
		Storage: js.FileStorage, Duplicates: time.Minute}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// The hub goes away in the middle of a batch and comes back: send says so
// at once, waits, re-sends, and reports every file stored exactly once;
// INGEST holds each file once (the one an earlier run had stored is
// dropped by the server as a duplicate and reported as such).
func TestSendWaitsOutTheHubGoingAway(t *testing.T) {
	srv := ingestServer(t, nil)
	files := writeInterchanges(t, 60)
	// An earlier, interrupted run had stored file 40 (its ack was lost).
	_, j := jetstreamtest.Connect(t, srv.URL)
	data40, _ := os.ReadFile(files[40])
	if _, err := j.PublishMsg(context.Background(), &nats.Msg{Subject: wire.IngestSubject("ACME"), Data: data40,
		Header: nats.Header{js.MsgIDHeader: {wire.SendMsgID("ACME", data40)}}}); err != nil {
		t.Fatal(err)
	}

	var out, errb syncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	restarted := make(chan *jetstreamtest.Server, 1)
	calls := 0
	stopAt20 := func(*nats.Msg) error {
		calls++
		if calls != 21 { // before file 20 is published
			return nil
		}
		srv.Stop()
		go func() {
			jetstreamtest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(errb.String(), "waiting for it") })
			restarted <- jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: srv.DataDir, Listen: srv.HostPort})
		}()
		return nil
	}
	cf := &clientFlags{server: srv.URL, getenv: e.getenv}
	o := sendOptions{Partner: "ACME", Timeout: 2 * time.Second, Wait: 30 * time.Second, Prepare: []func(*nats.Msg) error{stopAt20}}
	if err := sendFiles(context.Background(), e, cf, o, files); err != nil {
		t.Fatalf("send: %v\n%s", err, errb.String())
	}
	srv2 := <-restarted
	stderr := errb.String()
	for _, want := range []string{"connection to the hub lost", "file 21 of 60); waiting for it", "hub is back after",
		"stored 60 of 60 files (1 already stored before: re-sends the server dropped); the hub went away 1 time(s)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if n := strings.Count(out.String(), "\nsent ") + 1; n != 60 {
		t.Errorf("%d sent lines, want 60:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), filepath.Base(files[40])+" (") || !strings.Contains(out.String(), "(already stored: the server dropped this re-send)") {
		t.Errorf("file 40 not reported as already stored:\n%s", out.String())
	}
	_, j2 := jetstreamtest.Connect(t, srv2.URL)
	msgs := jetstreamtest.StreamMsgs(t, j2, "INGEST")
	seen := map[string]int{}
	for _, m := range msgs {
		seen[string(m.Data)]++
	}
	if len(msgs) != 60 || len(seen) != 60 {
		t.Fatalf("INGEST holds %d messages, %d distinct; want 60 each, no duplicates", len(msgs), len(seen))
	}
}

// When the hub does not come back within --wait, send exits 2 and says
// truthfully what was stored, what may be and what was not sent.
func TestSendGivesUpAfterWait(t *testing.T) {
	srv := ingestServer(t, nil)
	files := writeInterchanges(t, 12)
	var out, errb syncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	calls := 0
	stopAt5 := func(*nats.Msg) error {
		if calls++; calls == 6 {
			srv.Stop()
		}
		return nil
	}
	cf := &clientFlags{server: srv.URL, getenv: e.getenv, json: true}
	o := sendOptions{Partner: "ACME", Timeout: time.Second, Wait: time.Second, Prepare: []func(*nats.Msg) error{stopAt5}}
	err := sendFiles(context.Background(), e, cf, o, files)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "5 of 12 files stored") {
		t.Fatalf("want exit 2 naming 5 of 12 stored, got %v", err)
	}
	var doc struct {
		Stored, Failed, Unknown, NotSent int
		Files                            []client.Result
		ExitCode                         int `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Fatalf("one JSON document: %v\n%s", err, out.String())
	}
	notSent := 0
	for _, f := range doc.Files {
		if f.Status == client.StatusNotSent {
			notSent++
		}
	}
	if doc.Stored != 5 || doc.Failed != 0 || doc.Unknown+notSent != 7 || doc.ExitCode != exitUsage {
		t.Fatalf("stored %d failed %d unknown %d not sent %d exit %d\n%s", doc.Stored, doc.Failed, doc.Unknown, notSent, doc.ExitCode, out.String())
	}
}

// send waits briefly for the hub's verdict on each file and says it: a
// file parsed, one dead-lettered, an interchange ACME had sent before
// (a duplicate, per partner), the same file from GLOBEX (not a duplicate:
// the ledger key includes the partner), and the same bytes again
// (dropped by the server: Nats-Msg-Id).
func TestSendReportsTheHubsVerdict(t *testing.T) {
	d := startDLQHub(t)
	dir := t.TempDir()
	write := func(name, data string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	good := write("good.edi", edifacttest.Invoice("R1"))
	bad := write("bad.edi", "UNB+UNOC:3+S+R+261130:1200+R2'UNH+1+INVOIC:D:96A:UN'UNT+9+1'UNZ+1+R2'")
	send := func(args ...string) (string, string, int) {
		return runCmd(t, append([]string{"send", "--server", d.url}, args...)...)
	}
	again := write("again.edi", strings.Replace(edifacttest.Invoice("R1"), "BGM+380+R1", "BGM+380+OTHER", 1)) // same interchange, other bytes

	out, errOut, code := send("--partner", "ACME", good, bad)
	if code != exitOK || !strings.Contains(out, "parsed: "+good+" → edi.parsed.ACME.INVOIC") ||
		!strings.Contains(out, "dead-lettered: "+bad+" → edi.parse.dlq.schema") || !strings.Contains(out, "hub: 1 parsed, 1 dead lettered") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = send("--partner", "ACME", again)
	if code != exitOK || !strings.Contains(out, "duplicate: "+again+" — ACME had sent this interchange before") {
		t.Fatalf("duplicate not said: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = send("--partner", "GLOBEX", good)
	if code != exitOK || !strings.Contains(out, "parsed: "+good+" → edi.parsed.GLOBEX.INVOIC") {
		t.Fatalf("another partner's same interchange must be parsed: exit %d\n%s%s", code, out, errOut)
	}
	// The same interchange on standard input from a third partner.
	var so, se bytes.Buffer
	e := &env{stdin: strings.NewReader(edifacttest.Invoice("R1")), stdout: &so, stderr: &se, getenv: func(string) string { return "" }}
	if code := run(context.Background(), e, []string{"send", "--server", d.url, "--partner", "INITECH", "-"}); code != exitOK ||
		!strings.Contains(so.String(), "parsed: - → edi.parsed.INITECH.INVOIC") {
		t.Fatalf("standard input from another partner: exit %d\n%s%s", code, so.String(), se.String())
	}
	out, errOut, code = send("--partner", "ACME", "--json", good)
	var doc struct{ Files []client.Result }
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Files) != 1 || doc.Files[0].Outcome != client.OutcomeAlreadyStored {
		t.Fatalf("re-send of the same bytes: exit %d\n%s%s", code, out, errOut)
	}
	if n := d.count(t, "INGEST"); n != 5 {
		t.Fatalf("INGEST holds %d, want 5 (the last re-send dropped)", n)
	}
}

func TestProgressLine(t *testing.T) {
	got := progressLine(1000, 2, 4000, 10*time.Second)
	want := "[======>                 ] 1000/4000  25% 2 failed 100 files/s ETA 30s"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := progressLine(4000, 0, 4000, 8*time.Second); !strings.HasSuffix(got, "500 files/s in 8s") {
		t.Fatalf("done: %q", got)
	}
}

// Ctrl-C mid-batch: send stops, and says what is stored and what is not
// (exit 1), never calling an interrupted file failed.
func TestSendStopsOnInterrupt(t *testing.T) {
	srv := ingestServer(t, nil)
	files := writeInterchanges(t, 5)
	var out, errb syncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	interruptAt2 := func(*nats.Msg) error {
		if calls++; calls == 3 {
			cancel()
		}
		return nil
	}
	cf := &clientFlags{server: srv.URL, getenv: e.getenv}
	err := sendFiles(ctx, e, cf, sendOptions{Partner: "ACME", Timeout: time.Second, Wait: time.Minute, Prepare: []func(*nats.Msg) error{interruptAt2}}, files)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFailed || !strings.Contains(err.Error(), "stopped: 2 of 5 files stored") {
		t.Fatalf("want exit 1 naming 2 of 5 stored, got %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "stored 2 of 5 files, 1 maybe stored (sent, but no ack came; re-sending is safe), 2 not sent") {
		t.Fatalf("summary:\n%s", errb.String())
	}
}

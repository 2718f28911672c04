package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// fetch by subject (an inline payload to stdout) and by STREAM:SEQ (a
// payload stored aside, to a file, --json); a missing message and a
// missing argument fail with their exit codes.
func TestFetch(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := j.CreateStream(ctx, js.StreamConfig{Name: "PARSED", Subjects: []string{"edi.parsed.>"}}); err != nil {
		t.Fatal(err)
	}
	s, err := claimcheck.Open(ctx, j, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Publish(ctx, "edi.parsed.ACME.ORDERS", []byte(`{"inline":true}`)); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte(`{"tag":"LIN"},`), 50000)
	stub, err := s.Aside(ctx, &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Data: big}, "INGEST:2:out:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.PublishMsg(ctx, stub); err != nil {
		t.Fatal(err)
	}

	if out, errOut, code := runCmd(t, "fetch", "--server", srv.URL, "edi.parsed.ACME.ORDERS"); code != exitOK || out != `{"inline":true}` {
		t.Fatalf("fetch by subject: exit %d, %q %q", code, out, errOut)
	}
	f := filepath.Join(t.TempDir(), "view.json")
	out, errOut, code := runCmd(t, "fetch", "PARSED:2", "--server", srv.URL, "--out", f, "--json")
	var doc fetchResult
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || doc.Ref != "edihub-payloads/INGEST:2:out:0" || doc.Size != len(big) {
		t.Fatalf("fetch PARSED:2: exit %d, %q %q", code, out, errOut)
	}
	if got, err := os.ReadFile(f); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("file: %d bytes, %v", len(got), err)
	}
	if _, errOut, code := runCmd(t, "fetch", "--server", srv.URL, "PARSED:9"); code != exitFailed {
		t.Fatalf("a missing message: exit %d %q", code, errOut)
	}
	if _, _, code := runCmd(t, "fetch", "--server", srv.URL); code != exitUsage {
		t.Fatalf("no argument: exit %d", code)
	}
}

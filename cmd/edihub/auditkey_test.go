package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// serve creates <data>/audit.key (0600) at its first start, keeps it at
// the next, and refuses to start when others may read it.
func TestServeCreatesTheAuditKeyAndRefusesALooseOne(t *testing.T) {
	t.Setenv(audit.KeyEnv, "")
	dir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "edihub.yaml")
	yaml := "data_dir: " + dir + "\nnats:\n  listen: 127.0.0.1:-1\nhttp:\n  listen: 127.0.0.1:0\nlog:\n  level: error\nsandbox:\n  enabled: false\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	serveOnce := func(ctx context.Context) (int, string) {
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		return run(ctx, e, []string{"serve", "--config", cfgPath}), errb.String()
	}
	keyPath := filepath.Join(dir, audit.KeyFile)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var firstErr string
	go func() { code, e := serveOnce(ctx); firstErr = e; done <- code }()
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { _, err := os.Stat(keyPath); return err == nil })
	cancel()
	select {
	case code := <-done:
		if code != 0 && !strings.Contains(firstErr, "context canceled") { // stopped while starting up: fine
			t.Fatalf("first serve: exit %d\n%s", code, firstErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	st, err := os.Stat(keyPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("audit key %v (%v), want mode 0600", st.Mode(), err)
	}
	if _, err := audit.LoadKeyring(dir, func(string) string { return "" }); err != nil {
		t.Fatalf("the created key does not load: %v", err)
	}
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	code, errOut := serveOnce(context.Background())
	if code != 1 || !strings.Contains(errOut, "refusing to start") || !strings.Contains(errOut, "mode 0644") || !strings.Contains(errOut, "chmod 600") {
		t.Fatalf("serve with a world-readable key: exit %d\n%s", code, errOut)
	}
}

// audit verify names a foreign message by sequence and does not claim
// success without a key.
func TestAuditVerifyForeignMessagesAndNoKey(t *testing.T) {
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: t.TempDir()})
	nc, j, err := ejs.Connect(srv.ClientURL(), "audit-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	if _, err := j.CreateStream(ctx, js.StreamConfig{Name: "AUDIT", Subjects: []string{"edi.audit.>"}, DenyDelete: true, DenyPurge: true}); err != nil {
		t.Fatal(err)
	}
	keys := testAuditKeyring(t)
	if _, err := audit.New(j, "AUDIT", audit.WithKeyring(keys)).Append(ctx, audit.Event{Actor: "alice", Action: "show"}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := j.PublishMsg(ctx, &nats.Msg{Subject: "edi.audit.events", Data: []byte("}{ not an event")}); err != nil {
		t.Fatal(err)
	}
	// A new process's auditor appends after the junk (it used to fail here).
	if _, err := audit.New(j, "AUDIT", audit.WithKeyring(keys)).Append(ctx, audit.Event{Actor: "bob", Action: "drop"}, ""); err != nil {
		t.Fatal(err)
	}
	d := &dlqHub{url: srv.ClientURL()}
	out, errOut, code := d.cmd(t, "audit", "verify")
	if code != 1 || !strings.Contains(out, "event 2: unreadable") || !strings.Contains(errOut, "1 problem(s)") {
		t.Fatalf("verify with a foreign message: %d\n%s%s", code, out, errOut)
	}
	// No key: the chain alone is not a success.
	var o, e bytes.Buffer
	code = run(ctx, &env{stdin: strings.NewReader(""), stdout: &o, stderr: &e, getenv: func(string) string { return "" }},
		[]string{"audit", "verify", "--server", srv.ClientURL(), "--data", t.TempDir()})
	if code != 1 || !strings.Contains(e.String(), "events not authenticated: no key") {
		t.Fatalf("verify without a key: %d\n%s%s", code, o.String(), e.String())
	}
}

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/audit"
)

// runCmdCtx runs `edihub args...` in-process with ctx.
func runCmdCtx(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return map[string]string{"USER": "alice", audit.KeyEnv: testAuditKey}[k] }}
	code = run(ctx, e, args)
	return out.String(), errb.String(), code
}

// A misspelt filter value is a usage error listing the valid ones, not
// "0 rows" with exit 0.
func TestUnknownFilterValuesAreRefused(t *testing.T) {
	d := startDLQHub(t)
	d.publish(t, "ACME", "junk")
	d.waitDLQ(t, 1)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"dlq", "inspect", "--cause", "schmea"}, []string{`cause "schmea": no such cause`, "schema, business, partner-rejected", "timeout"}},
		{[]string{"dlq", "inspect", "--filter", "cause=schmea"}, []string{`no such cause`, "schema"}},
		{[]string{"dlq", "replay", "--filter", "cause=schmea", "--dry-run"}, []string{`no such cause`}},
		{[]string{"audit", "ls", "--action", "dropp"}, []string{`action "dropp": no such action`, "drop", "replay", "duplicate-skipped"}},
	} {
		_, errOut, code := d.cmd(t, c.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, exitUsage, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: error lacks %q: %s", c.args, w, errOut)
			}
		}
	}
	// The valid ones still answer.
	if out, errOut, code := d.cmd(t, "dlq", "inspect", "--cause", "schema"); code != 0 || !strings.Contains(out, "1 message(s)") {
		t.Fatalf("--cause schema: %d %s %s", code, out, errOut)
	}
	if out, errOut, code := d.cmd(t, "audit", "ls", "--action", "show"); code != 0 {
		t.Fatalf("--action show: %d %s %s", code, out, errOut)
	}
}

// --server is checked before dialling: credentials in the URL are refused
// with the flags to use (the password never shown), and an HTTP address
// gets its own hint instead of "is the hub running?".
func TestServerURLRefusals(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		url  string
		want []string
	}{
		{"nats://operator:S3cret-pw@127.0.0.1:4222", []string{"credentials in the URL", "--user", "--password-file", "--creds"}},
		{"nats://127.0.0.1:1,nats://u:S3cret-pw@127.0.0.1:2", []string{"credentials in the URL"}},
		{"http://127.0.0.1:8080", []string{"is an HTTP address", "nats://host:port"}},
		{"https://hub.example:443/console/", []string{"is an HTTP address"}},
	} {
		start := time.Now()
		_, errOut, code := runCmdCtx(ctx, "dlq", "ls", "--server", c.url)
		if code != exitUsage || strings.Contains(errOut, "S3cret-pw") || strings.Contains(errOut, "is the hub running") {
			t.Errorf("--server %s: exit %d: %s", c.url, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("--server %s: error lacks %q: %s", c.url, w, errOut)
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("--server %s: %v to refuse (it dialled)", c.url, d)
		}
	}
}

// Help lists the command's own flags first, the connection flags after.
func TestHelpListsOwnFlagsFirst(t *testing.T) {
	for _, args := range [][]string{{"dlq", "replay", "-h"}, {"dlq", "edit", "-h"}, {"send", "-h"}} {
		out, errOut, _ := runCmdCtx(context.Background(), args...)
		help := out + errOut
		own, conn, server := strings.Index(help, "\nFlags:"), strings.Index(help, "\nConnection flags"), strings.Index(help, "  -server")
		if own < 0 || conn < own || server < conn {
			t.Fatalf("%v: own flags at %d, connection flags at %d, -server at %d:\n%s", args, own, conn, server, help)
		}
		if i := strings.Index(help, "  -creds"); i < conn {
			t.Fatalf("%v: -creds among the command's own flags:\n%s", args, help)
		}
	}
	out, errOut, _ := runCmdCtx(context.Background(), "dlq", "replay", "-h")
	if help := out + errOut; strings.Index(help, "  -dry-run") > strings.Index(help, "\nConnection flags") {
		t.Fatalf("replay's -dry-run is not among its own flags:\n%s", help)
	}
}

// An interrupted replay says it was interrupted; "raise --max" is said
// only for what --max held back.
func TestInterruptedReplayHintsNoMax(t *testing.T) {
	d := startDLQHub(t)
	for range 4 {
		d.publish(t, "ACME", "junk")
	}
	d.waitDLQ(t, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old := opsClock
	frozen := time.Now()
	opsClock.now = func() time.Time { return frozen } // so the pacing always waits before the second message
	opsClock.sleep = func(time.Duration) { cancel() } // and Ctrl-C comes while it waits
	t.Cleanup(func() { opsClock = old })

	out, errOut, code := runCmdCtx(ctx, "dlq", "replay", "--filter", "kind=dlq", "--reason", "test", "--server", d.url)
	if code != exitFailed || !strings.Contains(out, "replayed 1") || !strings.Contains(out, "3 not sent: interrupted") || strings.Contains(out, "--max") {
		t.Fatalf("interrupted replay: %d\n%s%s", code, out, errOut)
	}
	d.waitDLQ(t, 4) // the replayed junk is dead-lettered again
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	opsClock.sleep = func(time.Duration) { cancel2() }
	out, errOut, code = runCmdCtx(ctx2, "dlq", "replay", "--filter", "kind=dlq", "--max", "2", "--server", d.url)
	if code != exitFailed || !strings.Contains(out, "2 more match — run again (or raise --max)") || !strings.Contains(out, "1 not sent: interrupted") {
		t.Fatalf("interrupted replay over --max: %d\n%s%s", code, out, errOut)
	}
}

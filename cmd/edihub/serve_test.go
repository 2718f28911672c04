package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/app"
)

func runServeCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	// Refusals are immediate; the deadline only ends a serve that (wrongly)
	// started.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code := run(ctx, e, append([]string{"serve"}, args...))
	return code, out.String() + errb.String()
}

// A second serve on a data folder that a running one holds refuses at
// once, names the folder and the holder's pid, and opens nothing there.
func TestSecondServeRefusesTheDataFolder(t *testing.T) {
	dir := t.TempDir()
	lock, err := app.LockDataDir(dir) // what the first serve holds
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, out := runServeCmd(t, "--data", dir, "--listen", "127.0.0.1:-1", "--http", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(out, "data folder "+dir+" in use by pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second serve: exit %d: %s", code, out)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v to refuse", d)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != app.LockFile {
		t.Fatalf("the refused serve touched the folder: %v", entries)
	}
	lock.Close()
	lock, err = app.LockDataDir(dir)
	if err != nil {
		t.Fatalf("lock not released: %v", err)
	}
	lock.Close()
}

// A busy NATS or HTTP port is named at once, not after the embedded
// server's 10 s readiness timeout, and before any store is opened.
func TestServeSaysBusyPortsAtOnce(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	for _, c := range []struct{ what, listen, http string }{
		{"NATS listen address", addr, "127.0.0.1:0"},
		{"HTTP address", "127.0.0.1:-1", addr},
	} {
		dir := t.TempDir()
		start := time.Now()
		code, out := runServeCmd(t, "--data", dir, "--listen", c.listen, "--http", c.http)
		if code != exitUsage || !strings.Contains(out, c.what+" "+addr+": port in use") {
			t.Fatalf("%s busy: exit %d: %s", c.what, code, out)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s busy: took %v", c.what, d)
		}
		if _, err := os.Stat(dir + "/jetstream"); err == nil {
			t.Fatalf("%s busy: the JetStream store was created", c.what)
		}
	}
}

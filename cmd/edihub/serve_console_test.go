package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// startServe runs `edihub serve args...` until the test ends and returns
// the URL its start-up log gives for the console (or the log's "off"
// text) and the log so far.
func startServe(t *testing.T, args ...string) (console string, log *syncBuffer) {
	t.Helper()
	log = &syncBuffer{}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: log, getenv: func(string) string { return "" }}
	dir := t.TempDir() // before the cleanup below, so removed after serve stopped
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, e, append([]string{"serve", "--data", dir, "--listen", "127.0.0.1:-1", "--http", "127.0.0.1:0"}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	re := regexp.MustCompile(`"console":"([^"]*)"`)
	jetstreamtest.Eventually(t, 60*time.Second, func() bool {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d:\n%s", code, log.String())
		default:
		}
		m := re.FindStringSubmatch(log.String())
		if m != nil {
			console = m[1]
		}
		return m != nil
	})
	return console, log
}

// The README's console step works as printed: serve --config
// configs/console.yaml with the token in $EDIHUB_TOKEN_ONCALL prints the
// console's URL at start-up, and the console and a login with the token
// answer there.
func TestServeConsoleConfigAsTheREADMESays(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	t.Setenv("EDIHUB_TOKEN_ONCALL", token)
	url, log := startServe(t, "--config", "../../configs/console.yaml")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/console/") {
		t.Fatalf("start-up log gives the console as %q:\n%s", url, log.String())
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<script") {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	resp, err = http.Post(strings.TrimSuffix(url, "/console/")+"/api/v1/session", "application/json", strings.NewReader(`{"token":"`+token+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("login with the token of configs/console.yaml: %d", resp.StatusCode)
	}
}

// Without api.tokens the start-up log says the console is off and why,
// and /console/ answers a page that says how to turn it on.
func TestServeWithoutTokensSaysHowToTurnTheConsoleOn(t *testing.T) {
	off, log := startServe(t)
	if !strings.HasPrefix(off, "off: no api.tokens") {
		t.Fatalf("start-up log gives the console as %q", off)
	}
	addr := regexp.MustCompile(`"http":"([^"]*)"`).FindStringSubmatch(log.String())
	if addr == nil {
		t.Fatalf("no http address in the log:\n%s", log.String())
	}
	for _, path := range []string{"/console/", "/console/#/messages", "/api/v1/dlq"} {
		resp, err := http.Get("http://" + addr[1] + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || !strings.Contains(string(body), "api.tokens") || !strings.Contains(string(body), "configs/console.yaml") {
			t.Fatalf("GET %s without tokens: %d %s", path, resp.StatusCode, body)
		}
	}
}

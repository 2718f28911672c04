package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// testConfig is serve's configuration on free ports and a temp folder,
// without the sandbox worker.
func testConfig(t *testing.T) *Config {
	t.Helper()
	c := DefaultConfig()
	c.DataDir = t.TempDir()
	c.NATS.Listen = "127.0.0.1:-1"
	c.HTTP.Listen = "127.0.0.1:0"
	off := false
	c.Sandbox.Enabled = &off
	return &c
}

func testEnv(t *testing.T) *Env {
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	return &Env{Logger: &log, Getenv: func(string) string { return "" }}
}

// An embedder gets the refusals the CLI gives, as ErrConfig, before
// anything is created in the data folder.
func TestNewRefusesWhatServeRefuses(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"unknown attempt store": func(c *Config) { c.Counter.Store = "redis" },
		"bbolt on a cluster":    func(c *Config) { c.NATS.Replicas = 3; c.Counter.Store = "bbolt" },
		"short ledger ttl":      func(c *Config) { c.Ledger.TTL = time.Second },
		"hub partitions":        func(c *Config) { c.Hub.Partitions = -1 },
	} {
		c := testConfig(t)
		mod(c)
		_, err := New(context.Background(), c, testEnv(t))
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
		if entries, _ := os.ReadDir(c.DataDir); len(entries) != 0 {
			t.Errorf("%s: the refused New created %v", name, entries)
		}
	}
}

// The application in-process: New opens, Run serves the handler and the
// hub until its context ends, then everything is closed (a second New on
// the same folder gets the lock).
func TestNewRunStop(t *testing.T) {
	c := testConfig(t)
	a, err := New(context.Background(), c, testEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), c, testEnv(t)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a second New on the folder: %v", err)
	}
	stop := running(t, a)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code == http.StatusOK
	}, "not ready")
	resp, err := http.Get("http://" + a.HTTPAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz on the HTTP port: %s", resp.Status)
	}
	stop()
	again, err := New(context.Background(), c, testEnv(t))
	if err != nil {
		t.Fatalf("New after Run ended: %v", err)
	}
	again.Close()
}

// running runs a until stop, which waits (30 s at most) for Run to return
// and fails the test unless it returned nil.
func running(t *testing.T, a *App) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	return func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return")
		}
	}
}

package app

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// The environment's GOGC and GOMEMLIMIT win over the file; otherwise the
// file's settings reach the runtime.
func TestRuntimeConfigApply(t *testing.T) {
	before := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(limit) })

	c := RuntimeConfig{MemoryLimit: 3 << 30}
	c.setDefaults()
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	said := c.Apply(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != DefaultGCPercent {
		t.Errorf("gc percent %d, want %d", got, DefaultGCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Errorf("memory limit %d, want 3 GiB", got)
	}
	if !strings.Contains(said, "gc_percent 400") || !strings.Contains(said, "memory_limit 3GiB") {
		t.Errorf("said %q", said)
	}

	debug.SetMemoryLimit(limit)
	debug.SetGCPercent(77)
	env := map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}
	said = c.Apply(func(k string) string { return env[k] })
	if got := debug.SetGCPercent(100); got != 77 {
		t.Errorf("the file overrode GOGC from the environment: %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("the file overrode GOMEMLIMIT from the environment: %d", got)
	}
	if !strings.Contains(said, "GOGC=150 from the environment") {
		t.Errorf("said %q", said)
	}
	if err := (RuntimeConfig{GCPercent: -5}).validate(); err == nil {
		t.Error("a negative gc_percent was accepted")
	}
	if _, err := loadConfigText(t, "runtime:\n  memory_limit: much\n"); err == nil {
		t.Error("memory_limit much was accepted")
	}
}

// loadConfigText loads a config file holding text.
func loadConfigText(t *testing.T, text string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edihub.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadConfig(path)
}

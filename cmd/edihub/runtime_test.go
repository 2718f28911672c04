package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "0": 0, "1000": 1000, "512MiB": 512 << 20, "2GiB": 2 << 30, "64KB": 64000, " 3 MiB ": 3 << 20, "7B": 7,
	} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"lots", "-1GiB", "1.5GiB", "GiB", "99999999999TiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

// The environment's GOGC and GOMEMLIMIT win over the file; otherwise the
// file's settings reach the runtime.
func TestRuntimeConfigApply(t *testing.T) {
	before := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(limit) })

	c := runtimeConfig{MemoryLimit: "3GiB"}
	c.setDefaults()
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	said := c.apply(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("gc percent %d, want %d", got, defaultGCPercent)
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
	said = c.apply(func(k string) string { return env[k] })
	if got := debug.SetGCPercent(100); got != 77 {
		t.Errorf("the file overrode GOGC from the environment: %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("the file overrode GOMEMLIMIT from the environment: %d", got)
	}
	if !strings.Contains(said, "GOGC=150 from the environment") {
		t.Errorf("said %q", said)
	}
	if err := (runtimeConfig{GCPercent: -5}).validate(); err == nil {
		t.Error("a negative gc_percent was accepted")
	}
	if err := (runtimeConfig{GCPercent: 100, MemoryLimit: "much"}).validate(); err == nil {
		t.Error("memory_limit much was accepted")
	}
}

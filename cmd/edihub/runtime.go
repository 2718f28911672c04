package main

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
)

// runtimeConfig tunes the Go runtime of serve, and of bench, which
// measures serve's pipeline. The hub's live heap is small (tens of MB, plus
// ~150 bytes per interchange the ledger remembers) and every message
// allocates its outputs, so with Go's default target the collector runs
// very often; a higher target trades memory for CPU.
type runtimeConfig struct {
	// GCPercent is the collector's target (GOGC): the heap may grow by
	// this percentage of the live heap before a collection. The
	// environment's GOGC wins.
	GCPercent int `yaml:"gc_percent"`
	// MemoryLimit is a soft limit for the whole Go heap (GOMEMLIMIT), such
	// as 512MiB or 2GiB; near it the collector runs more often whatever
	// GCPercent says. Empty: none. The environment's GOMEMLIMIT wins.
	MemoryLimit string `yaml:"memory_limit"`
}

// defaultGCPercent is serve's collector target (see BENCHMARKS.md).
const defaultGCPercent = 400

func (c *runtimeConfig) setDefaults() {
	if c.GCPercent == 0 {
		c.GCPercent = defaultGCPercent
	}
}

func (c runtimeConfig) validate() error {
	if c.GCPercent < 0 {
		return fmt.Errorf("runtime.gc_percent %d: want a positive percentage", c.GCPercent)
	}
	if _, err := parseBytes(c.MemoryLimit); err != nil {
		return fmt.Errorf("runtime.memory_limit %q: %v", c.MemoryLimit, err)
	}
	return nil
}

// apply sets the collector's target and memory limit unless the
// environment set them, and says what it did.
func (c runtimeConfig) apply(getenv func(string) string) string {
	var said []string
	if v := getenv("GOGC"); v != "" {
		said = append(said, "GOGC="+v+" from the environment")
	} else {
		debug.SetGCPercent(c.GCPercent)
		said = append(said, "gc_percent "+strconv.Itoa(c.GCPercent))
	}
	if v := getenv("GOMEMLIMIT"); v != "" {
		said = append(said, "GOMEMLIMIT="+v+" from the environment")
	} else if n, _ := parseBytes(c.MemoryLimit); n > 0 {
		debug.SetMemoryLimit(n)
		said = append(said, "memory_limit "+c.MemoryLimit)
	}
	return strings.Join(said, ", ")
}

// parseBytes reads a size such as 512MiB, 2GiB, 1000000 or 64KB; "" is 0.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a size such as 512MiB or 2GiB")
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("too large")
	}
	return n * mult, nil
}

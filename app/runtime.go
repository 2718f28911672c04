package app

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/edihub/edihub/hub/forensics"
)

// RuntimeConfig tunes the Go runtime of serve, and of bench, which
// measures serve's pipeline. The hub's live heap is small (tens of MB, plus
// the ledger index's latest records) and every message
// allocates its outputs, so with Go's default target the collector runs
// very often; a higher target trades memory for CPU.
type RuntimeConfig struct {
	// GCPercent is the collector's target (GOGC): the heap may grow by
	// this percentage of the live heap before a collection. The
	// environment's GOGC wins.
	GCPercent int `yaml:"gc_percent"`
	// MemoryLimit is a soft limit for the whole Go heap (GOMEMLIMIT), such
	// as 512MiB or 2GiB; near it the collector runs more often whatever
	// GCPercent says. 0: none. The environment's GOMEMLIMIT wins.
	MemoryLimit forensics.ByteSize `yaml:"memory_limit"`
}

// DefaultGCPercent is serve's collector target (see BENCHMARKS.md).
const DefaultGCPercent = 400

func (c *RuntimeConfig) setDefaults() {
	if c.GCPercent == 0 {
		c.GCPercent = DefaultGCPercent
	}
}

func (c RuntimeConfig) validate() error {
	if c.GCPercent < 0 {
		return fmt.Errorf("runtime.gc_percent %d: want a positive percentage", c.GCPercent)
	}
	if c.MemoryLimit < 0 {
		return fmt.Errorf("runtime.memory_limit %d: want a size", c.MemoryLimit)
	}
	return nil
}

// Apply sets the collector's target and memory limit unless the
// environment set them, and says what it did.
func (c RuntimeConfig) Apply(getenv func(string) string) string {
	var said []string
	if v := getenv("GOGC"); v != "" {
		said = append(said, "GOGC="+v+" from the environment")
	} else {
		debug.SetGCPercent(c.GCPercent)
		said = append(said, "gc_percent "+strconv.Itoa(c.GCPercent))
	}
	if v := getenv("GOMEMLIMIT"); v != "" {
		said = append(said, "GOMEMLIMIT="+v+" from the environment")
	} else if c.MemoryLimit > 0 {
		debug.SetMemoryLimit(int64(c.MemoryLimit))
		said = append(said, "memory_limit "+c.MemoryLimit.String())
	}
	return strings.Join(said, ", ")
}

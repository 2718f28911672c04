//go:build unix

package directory

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process has used: on a shared
// machine it measures what a benchmark costs, where wall time also counts
// the waits for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

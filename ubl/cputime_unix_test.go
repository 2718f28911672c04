//go:build unix

package ubl

import (
	"syscall"
	"time"
)

// cpuTime is the CPU (user + system) this process has used: on a shared
// machine it moves far less between runs than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

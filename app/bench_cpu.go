package app

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used so
// far: the bench's clients, the hub and the embedded server together.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// medianOrZero is median for a side that may not have run.
func medianOrZero(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return median(xs)
}

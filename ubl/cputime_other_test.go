//go:build !unix

package ubl

import "time"

func cpuTime() time.Duration { return 0 }

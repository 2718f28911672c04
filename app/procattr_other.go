//go:build !linux

package app

import "syscall"

// workerProcAttr: other systems have no Pdeathsig; a worker orphaned by a
// hard kill of serve notices its closed NATS connection and exits.
func workerProcAttr() *syscall.SysProcAttr { return nil }

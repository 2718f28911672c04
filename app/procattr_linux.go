package app

import "syscall"

// workerProcAttr: if serve is killed hard, the sandbox worker goes with it
// (Pdeathsig) instead of running on as an orphan.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// errUnsupported: resource limits are implemented with setrlimit/prlimit
// and /proc on Linux only. Running a poison message without caps would
// defeat the purpose, so Run and ChildMain refuse instead of degrading.
var errUnsupported = errors.New("sandbox: resource-limited child processes are only supported on Linux")

func sysProcAttr() *syscall.SysProcAttr { return nil }

func applySelfLimits(memLimit, cpuSec int64) (Limits, error) { return Limits{}, errUnsupported }

func enforceLimits(pid int, memLimit, cpuSec int64) (Limits, error) {
	return Limits{}, errUnsupported
}

func sampleMem(pid int) (hwm, data int64) { return 0, 0 }

func selfPeakRSS() int64 { return 0 }

func waitExited(pid int) error { return errUnsupported }

func killGroup(pid int) {}

func exitInfo(ps *os.ProcessState) (code int, sig string, cpu time.Duration) {
	return ps.ExitCode(), "", ps.UserTime() + ps.SystemTime()
}

func onCPULimit(fn func()) {}

// Isolation, like the limits, is Linux only; Run and ChildMain refuse to
// run elsewhere (errUnsupported), so these are never reached.

type isoSetup struct{ dir string }

func prepareIsolation(s *Spec) (*isoSetup, error) { return nil, errUnsupported }

func (iso *isoSetup) cleanup() error { return nil }

func (iso *isoSetup) openBinary(path string) (string, *os.File, error) { return path, nil, nil }

func (iso *isoSetup) sysProcAttr() *syscall.SysProcAttr { return nil }

func (iso *isoSetup) retryWithoutNetns(err error) bool { return false }

func verifyIsolation(pid int, claimed *Isolation, setup *isoSetup) Isolation {
	var iso Isolation
	iso.finish()
	return iso
}

func closeInheritedFDs(keep int) (int, error) { return 0, errUnsupported }

func isolateSelf(fdsClosed int, fdsErr error) *Isolation { return &Isolation{} }

func keepSelfStatus() {}

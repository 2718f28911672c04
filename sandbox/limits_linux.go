//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// errUnsupported is nil on Linux: limits are enforced here.
var errUnsupported error

// sysProcAttr puts the child in its own process group, so a timeout kills
// anything it spawned too, and asks the kernel to SIGKILL it if the thread
// that started it dies (run.go pins that thread for the child's lifetime).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// memStatus is the part of /proc/<pid>/status the sandbox needs, in bytes.
type memStatus struct {
	VmSize, VmData, VmHWM int64
}

func readMemStatus(pid string) (memStatus, error) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return memStatus{}, fmt.Errorf("read memory status: %w", err)
	}
	return parseMemStatus(b, pid)
}

func parseMemStatus(b []byte, pid string) (memStatus, error) {
	var m memStatus
	sc := bufio.NewScanner(bytes.NewReader(b))
	found := 0
	for sc.Scan() {
		key, val, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(key) {
		case "VmSize":
			dst = &m.VmSize
		case "VmData":
			dst = &m.VmData
		case "VmHWM":
			dst = &m.VmHWM
		default:
			continue
		}
		kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(val), []byte(" kB"))), 10, 64)
		if err != nil {
			return m, fmt.Errorf("parse %s in /proc/%s/status: %w", key, pid, err)
		}
		*dst = kb << 10
		found++
	}
	if found < 3 {
		// A zombie has no Vm* lines: its memory is already gone.
		return m, fmt.Errorf("no memory figures in /proc/%s/status (process exited?)", pid)
	}
	return m, nil
}

// asFactor sizes the RLIMIT_AS backstop. The heap grows its reservations in
// 64 MiB arenas and a race-detector build maps shadow memory for each, so
// address space grows several times faster than data; the backstop must
// never fire before RLIMIT_DATA in normal Go allocation.
const asFactor = 4

// wantLimits computes the limits for a child whose start-up footprint is m.
// RLIMIT_AS alone cannot be the cap: a Go process reserves ~1.2 GiB of
// address space (PROT_NONE arena and page-summary reservations) before main
// runs, so AS=256 MiB makes the runtime die at start-up ("failed to reserve
// page summary memory") or on the first heap growth. Reserved-but-unused
// space is not in VmData; heap, stacks and anything else written to are.
func wantLimits(m memStatus, memLimit, cpuSec int64) Limits {
	return Limits{
		DataBytes:         m.VmData + memLimit,
		AddressSpaceBytes: m.VmSize + asFactor*memLimit,
		CPUSeconds:        cpuSec,
		BaselineDataBytes: m.VmData,
		BaselineVMBytes:   m.VmSize,
	}
}

type rlimitSetter func(resource int, newLim, old *unix.Rlimit) error

// lower lowers resource to at most cur/max (never raises: that would need
// privileges and would loosen a stricter limit set by someone else).
func lower(set rlimitSetter, resource int, cur, max uint64) (unix.Rlimit, error) {
	var old unix.Rlimit
	if err := set(resource, nil, &old); err != nil {
		return old, fmt.Errorf("get rlimit %d: %w", resource, err)
	}
	nl := unix.Rlimit{Cur: min(old.Cur, cur), Max: min(old.Max, max)}
	nl.Cur = min(nl.Cur, nl.Max)
	if nl == old {
		return old, nil
	}
	if err := set(resource, &nl, nil); err != nil {
		return old, fmt.Errorf("set rlimit %d to %d/%d: %w", resource, nl.Cur, nl.Max, err)
	}
	return nl, nil
}

func applyLimits(set rlimitSetter, want Limits) (Limits, error) {
	got := want
	cpu, err := lower(set, unix.RLIMIT_CPU, uint64(want.CPUSeconds), uint64(want.CPUSeconds)+1)
	if err != nil {
		return got, err
	}
	data, err := lower(set, unix.RLIMIT_DATA, uint64(want.DataBytes), uint64(want.DataBytes))
	if err != nil {
		return got, err
	}
	as, err := lower(set, unix.RLIMIT_AS, uint64(want.AddressSpaceBytes), uint64(want.AddressSpaceBytes))
	if err != nil {
		return got, err
	}
	got.CPUSeconds, got.DataBytes, got.AddressSpaceBytes = int64(cpu.Cur), int64(data.Cur), int64(as.Cur)
	return got, nil
}

// applySelfLimits is the child's half: limit itself before touching the
// payload. Lowering one's own limits needs no privilege, so this works even
// where prlimit(2) on another process is denied.
func applySelfLimits(memLimit, cpuSec int64) (Limits, error) {
	m, err := readMemStatus("self")
	if err != nil {
		return Limits{}, err
	}
	self := func(resource int, newLim, old *unix.Rlimit) error {
		return unix.Prlimit(0, resource, newLim, old)
	}
	l, err := applyLimits(self, wantLimits(m, memLimit, cpuSec))
	l.AppliedBy = "child"
	return l, err
}

// enforceLimits is the parent's half: measure the waiting child itself,
// read its limits with prlimit(2) and lower any that are looser than the
// spec. It does not rely on the child having done its part.
func enforceLimits(pid int, memLimit, cpuSec int64) (Limits, error) {
	m, err := readMemStatus(strconv.Itoa(pid))
	if err != nil {
		return Limits{}, err
	}
	other := func(resource int, newLim, old *unix.Rlimit) error {
		return unix.Prlimit(pid, resource, newLim, old)
	}
	want := wantLimits(m, memLimit, cpuSec)
	l, err := applyLimits(other, want)
	l.AppliedBy = "child+parent"
	if errors.Is(err, unix.EPERM) {
		// prlimit(2) on a child that runs as another user needs
		// CAP_SYS_RESOURCE, which a root hub in a container may lack.
		// /proc/<pid>/limits still shows whether the child's own are tight.
		l, verr := verifyLimits(pid, want)
		if verr != nil {
			return l, fmt.Errorf("%w; %w", err, verr)
		}
		return l, nil
	}
	return l, err
}

// verifyLimits reads the child's limits from /proc/<pid>/limits and fails
// if one is looser than want.
func verifyLimits(pid int, want Limits) (Limits, error) {
	got := want
	got.AppliedBy = "child, verified by parent"
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	if err != nil {
		return got, fmt.Errorf("verify limits: %w", err)
	}
	rows := map[string]struct {
		dst      *int64
		cur, max uint64
	}{
		"Max cpu time":      {&got.CPUSeconds, uint64(want.CPUSeconds), uint64(want.CPUSeconds) + 1},
		"Max data size":     {&got.DataBytes, uint64(want.DataBytes), uint64(want.DataBytes)},
		"Max address space": {&got.AddressSpaceBytes, uint64(want.AddressSpaceBytes), uint64(want.AddressSpaceBytes)},
	}
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		for name, r := range rows {
			rest, ok := strings.CutPrefix(line, name+" ")
			if !ok {
				continue
			}
			f := strings.Fields(rest)
			if len(f) < 2 {
				return got, fmt.Errorf("verify limits: malformed %q", line)
			}
			cur, max := parseLimit(f[0]), parseLimit(f[1])
			if cur > r.cur || max > r.max {
				return got, fmt.Errorf("verify limits: %s is %s/%s, want at most %d/%d", name, f[0], f[1], r.cur, r.max)
			}
			*r.dst = int64(cur)
			seen++
		}
	}
	if seen != len(rows) {
		return got, fmt.Errorf("verify limits: only %d of %d limits in /proc/%d/limits", seen, len(rows), pid)
	}
	return got, nil
}

func parseLimit(s string) uint64 {
	if s == "unlimited" {
		return math.MaxUint64
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return math.MaxUint64 // unreadable counts as loose
	}
	return n
}

// sampleMem returns the child's VmHWM and VmData, or zeros once it exited.
func sampleMem(pid int) (hwm, data int64) {
	m, err := readMemStatus(strconv.Itoa(pid))
	if err != nil {
		return 0, 0
	}
	return m.VmHWM, m.VmData
}

// selfStatus is /proc/self/status, opened before Landlock denies opening
// it; a read at offset 0 regenerates its contents.
var selfStatus *os.File

func keepSelfStatus() {
	selfStatus, _ = os.Open("/proc/self/status")
}

// selfPeakRSS is the calling process's VmHWM.
func selfPeakRSS() int64 {
	if selfStatus == nil {
		m, _ := readMemStatus("self")
		return m.VmHWM
	}
	b := make([]byte, 16<<10)
	n, err := selfStatus.ReadAt(b, 0)
	if n == 0 && err != nil {
		return 0
	}
	m, _ := parseMemStatus(b[:n], "self")
	return m.VmHWM
}

// waitExited blocks until pid has exited without reaping it, so the pid
// cannot be reused while the memory sampler may still read /proc/<pid>.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// killGroup SIGKILLs the child's process group (see sysProcAttr).
func killGroup(pid int) {
	_ = unix.Kill(-pid, unix.SIGKILL)
}

// exitInfo extracts how the child ended and the CPU it used. rusage's
// ru_maxrss is deliberately not used: with vfork+exec the child inherits the
// parent's RSS high-water mark (measured: 412 MiB for /bin/true started by a
// process holding 400 MiB).
func exitInfo(ps *os.ProcessState) (code int, sig string, cpu time.Duration) {
	code = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig = unix.SignalName(ws.Signal())
		if sig == "" {
			sig = ws.Signal().String()
		}
	}
	return code, sig, ps.UserTime() + ps.SystemTime()
}

// onCPULimit calls fn when the soft RLIMIT_CPU is reached. Without this the
// Go runtime ignores SIGXCPU and the kernel SIGKILLs the child at the hard
// limit a second later, losing the stack that shows where it spun.
func onCPULimit(fn func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGXCPU)
	go func() {
		<-ch
		fn()
	}()
}

//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// closeInheritedFDs closes every descriptor above keep that lacks
// close-on-exec. Such a descriptor survived execve, so it belongs to the
// hub or whoever started the hub (a NATS connection, a log file); the Go
// runtime opens its own with O_CLOEXEC, so none of those is touched.
func closeInheritedFDs(keep int) (closed int, err error) {
	fds, err := openFDs()
	if err != nil {
		return 0, err
	}
	for _, fd := range fds {
		if fd <= keep {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // the directory listing's own fd, or the runtime's
		}
		if err := unix.Close(fd); err != nil {
			return closed, fmt.Errorf("close inherited fd %d: %w", fd, err)
		}
		closed++
	}
	return closed, nil
}

// openFDs lists the open descriptors from /proc/self/fd, or probes every
// number below RLIMIT_NOFILE (capped) where /proc is not mounted.
func openFDs() ([]int, error) {
	names, err := readDirNames("/proc/self/fd")
	if err == nil {
		fds := make([]int, 0, len(names))
		for _, n := range names {
			if fd, err := strconv.Atoi(n); err == nil {
				fds = append(fds, fd)
			}
		}
		return fds, nil
	}
	var lim unix.Rlimit
	if gerr := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); gerr != nil {
		return nil, fmt.Errorf("list fds: %w; getrlimit NOFILE: %w", err, gerr)
	}
	var fds []int
	for fd := 0; uint64(fd) < min(lim.Cur, 1<<20); fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			fds = append(fds, fd)
		}
	}
	return fds, nil
}

func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// seccompDenied are the calls the filter makes fail with EPERM. A
// denylist, so the Go runtime keeps everything it needs (mmap, clone,
// futex, signals): no network (io_uring could open sockets behind the
// filter's back), no exec, no tracing or reading other processes, no
// namespaces, mounts, keys, BPF or kernel modules.
var seccompDenied = []string{
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	"execve", "execveat",
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"bpf", "perf_event_open", "userfaultfd",
	"keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"init_module", "finit_module", "delete_module", "kexec_load",
	"pidfd_send_signal", "process_madvise", "kcmp", "migrate_pages", "move_pages",
	// tkill(tid) names a thread of any process and no filter can tell the
	// child's own tids; Go uses tgkill, glibc too, so nobody here needs it.
	"tkill",
}

// pidCalls take a pid as their first argument, 0 meaning the caller: the
// child may use them on itself only. kill(0) (the process group, the hub
// included) and negative pids (groups) are refused too.
var pidCalls = []string{"prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr",
	"pidfd_open"}

// parentGuards are the argument filters (conditions of one entry are all
// true for the call to be refused; entries of one name are alternatives)
// that keep the child from touching any process but itself.
func parentGuards(self uint64) []seccomp.NameWithConditions {
	other := func(arg uint32, allowZero bool) seccomp.ArgumentConditions {
		c := seccomp.ArgumentConditions{{Argument: arg, Operation: seccomp.NotEqual, Value: self}}
		if allowZero {
			c = append(c, seccomp.Condition{Argument: arg, Operation: seccomp.NotEqual, Value: 0})
		}
		return c
	}
	var g []seccomp.NameWithConditions
	for _, n := range pidCalls {
		// pidfd_open(0) is no shorthand for the caller.
		g = append(g, seccomp.NameWithConditions{Name: n, Conditions: other(0, n != "pidfd_open")})
	}
	// kill(pid): only itself (0 and -1 reach the group and every process).
	// tgkill(tgid, tid), rt_sigqueueinfo(tgid) and rt_tgsigqueueinfo(tgid,
	// tid): only its own thread group. The Go runtime preempts its threads
	// with tgkill(getpid(), tid): self is the child's pid, read after exec
	// by the child that installs the filter, so those calls stay allowed
	// (the kernel refuses a tid outside the tgid).
	for _, n := range []string{"kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"} {
		g = append(g, seccomp.NameWithConditions{Name: n, Conditions: other(0, false)})
	}
	// setpriority(which, who) and ioprio_set(which, who): a process only
	// (not a group or a user), and that process itself.
	for _, c := range []struct {
		name    string
		process uint64
	}{{"setpriority", unix.PRIO_PROCESS}, {"ioprio_set", 1 /* IOPRIO_WHO_PROCESS */}} {
		g = append(g,
			seccomp.NameWithConditions{Name: c.name, Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: c.process}}},
			seccomp.NameWithConditions{Name: c.name, Conditions: other(1, true)})
	}
	return g
}

// cloneNewNamespaces are clone(2)'s namespace flags (CLONE_NEWTIME only
// exists for clone3 and unshare; in clone its bit is part of the exit signal).
const cloneNewNamespaces = unix.CLONE_NEWUSER | unix.CLONE_NEWNET | unix.CLONE_NEWNS | unix.CLONE_NEWPID |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// nativeAuditArch is the seccomp arch of this build. The denylist filter
// lets through calls of any other arch (go-seccomp-bpf jumps to the default
// action), e.g. i386 via int 0x80 on amd64, so archFilter refuses those.
var nativeAuditArch = map[string]uint32{
	"amd64": unix.AUDIT_ARCH_X86_64,
	"arm64": unix.AUDIT_ARCH_AARCH64,
}[runtime.GOARCH]

// installSeccomp sets no_new_privs and loads both filters on every thread
// (TSYNC also sets no_new_privs on the other threads).
func installSeccomp() error {
	if nativeAuditArch == 0 {
		return fmt.Errorf("no seccomp arch known for GOARCH=%s", runtime.GOARCH)
	}
	// prctl and seccomp must run on the same thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := seccomp.SetNoNewPrivs(); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := loadArchFilter(); err != nil {
		return err
	}
	err := seccomp.LoadFilter(seccomp.Filter{
		Flag: seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{
				{Names: seccompDenied, Action: seccomp.ActionErrno}, // EPERM
				// unshare is denied; clone must not create namespaces either
				// (a user namespace opens much kernel attack surface).
				{NamesWithCondtions: []seccomp.NameWithConditions{{Name: "clone", Conditions: seccomp.ArgumentConditions{
					{Argument: 0, Operation: seccomp.BitsSet, Value: cloneNewNamespaces}}}}, Action: seccomp.ActionErrno},
				// Nothing that reaches another process: its limits, priority,
				// CPUs, I/O class or signals (the hub, its parent, above all).
				{NamesWithCondtions: parentGuards(uint64(os.Getpid())), Action: seccomp.ActionErrno},
				// clone3 passes its flags in memory a filter cannot read;
				// ENOSYS makes Go and glibc fall back to clone(2).
				{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
			},
		},
	})
	if err != nil {
		return fmt.Errorf("seccomp denylist: %w", err)
	}
	return nil
}

func loadArchFilter() error {
	raw, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: nativeAuditArch, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		return fmt.Errorf("seccomp arch filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return fmt.Errorf("seccomp arch filter: %w", errno)
	}
	return nil
}

// landlockMaxABI is the newest ABI go-landlock's landlock.V11 describes.
const landlockMaxABI = 11

// enforceLandlock denies every filesystem access the kernel's Landlock ABI
// can express (no rules: nothing is allowed), plus TCP bind/connect (ABI
// 4+) and signals and abstract unix sockets outside the domain (ABI 6+).
// Descriptors opened before, like the pipes, keep working. It returns the
// ABI in force.
func enforceLandlock() (int, error) {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi <= 0 {
		return 0, fmt.Errorf("not supported by this kernel (ABI %d): %v", abi, err)
	}
	if err := landlock.V11.BestEffort().Restrict(); err != nil {
		return 0, fmt.Errorf("restrict: %w", err)
	}
	return min(abi, landlockMaxABI), nil
}

// isolateSelf is the child's half of the isolation, run after the rlimits
// are set and before "ready": from here on the child can open no file,
// create no socket and exec nothing.
func isolateSelf(fdsClosed int, fdsErr error) *Isolation {
	iso := &Isolation{FDsClosed: fdsClosed, FDsOK: fdsErr == nil, UID: os.Getuid(), GID: os.Getgid()}
	if fdsErr != nil {
		iso.miss(LayerFDs, "%v", fdsErr)
	}
	if wd, err := os.Getwd(); err == nil {
		iso.Cwd = wd
	} else {
		iso.miss(LayerCwd, "getwd: %v", err)
	}
	// no_new_privs on every thread first: Landlock and seccomp need it.
	if err := llsys.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		iso.miss(LayerNoNewPrivs, "prctl: %v", err)
	}
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	iso.NoNewPrivs = err == nil && nnp == 1
	// Landlock before seccomp: in a cgo build go-landlock reaches every
	// thread through libpsx, which signals them with tkill, and the seccomp
	// filter refuses tkill (a stalled psx call hung the child).
	abi, err := enforceLandlock()
	if err != nil {
		iso.miss(LayerLandlock, "%v", err)
	}
	if err := installSeccomp(); err != nil {
		iso.miss(LayerSeccomp, "%v", err)
	} else {
		iso.Seccomp = true
	}
	iso.LandlockABI = abi
	return iso
}

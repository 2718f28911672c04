//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// probeTargets is the payload of the "probe" child: what to try to reach.
type probeTargets struct {
	File     string // world-readable file in a world-searchable directory
	Addr     string // a TCP listener of the test process on loopback
	FD       int    // descriptor the test left open without close-on-exec
	Dev, Ino uint64 // identity of the file behind FD
}

func init() {
	testAnalyzers["probe"] = probe
	testChildMains["lying-child"] = lyingChild
}

// probe tries, from inside the sandbox, everything the isolation should
// deny, and reports each outcome as "ok" or the errno name.
func probe(ctx context.Context, payload []byte, progress func(Progress)) (Result, error) {
	var tg probeTargets
	if err := json.Unmarshal(payload, &tg); err != nil {
		return Result{}, err
	}
	d := map[string]string{}
	d["uid"] = strconv.Itoa(os.Getuid())
	d["euid"] = strconv.Itoa(os.Geteuid())
	d["gid"] = strconv.Itoa(os.Getgid())
	groups, _ := os.Getgroups()
	d["groups"] = fmt.Sprint(groups)
	d["cwd"], _ = os.Getwd()
	_, err := os.ReadDir(".")
	d["readdir_cwd"] = errnoOf(err)
	f, err := os.Create("dropped")
	if err == nil {
		f.Close()
	}
	d["create_in_cwd"] = errnoOf(err)
	f, err = os.Open(tg.File)
	if err == nil {
		f.Close()
	}
	d["open_file"] = errnoOf(err)
	_, err = os.ReadFile("/etc/shadow")
	d["open_shadow"] = errnoOf(err)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.Close(fd)
	}
	d["socket_inet"] = errnoOf(err)
	fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.Close(fd)
	}
	d["socket_unix"] = errnoOf(err)
	c, err := net.Dial("tcp", tg.Addr)
	if err == nil {
		c.Close()
	}
	d["dial"] = errnoOf(err)
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	// Own descriptors, or os/exec opens /dev/null and Landlock denies that.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	d["exec"] = errnoOf(cmd.Run())
	d["execve"] = errnoOf(unix.Exec("/bin/sh", []string{"sh", "-c", "exit 0"}, nil))
	d["unshare_newuser"] = errnoOf(unix.Unshare(unix.CLONE_NEWUSER))
	d["clone_newuser"] = cloneNewUser()
	var st unix.Stat_t
	switch err := unix.Fstat(tg.FD, &st); {
	case err != nil:
		d["fd"] = errnoOf(err)
	case st.Dev == tg.Dev && st.Ino == tg.Ino:
		d["fd"] = "inherited"
	default:
		d["fd"] = "reused by another file"
	}
	parentProbe(d)
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	d["no_new_privs"] = strconv.Itoa(nnp) + "/" + errnoOf(err)
	mode, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	d["seccomp_mode"] = strconv.Itoa(mode) + "/" + errnoOf(err)
	d["netns"], _ = os.Readlink("/proc/self/ns/net") // readlink is not a Landlock right
	return Result{Details: d}, nil
}

// cloneNewUser forks with CLONE_NEWUSER; a child, if the filter lets it be
// born, exits at once without running any Go code.
func cloneNewUser() string {
	pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 {
		return unix.ErrnoName(errno)
	}
	if pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	unix.Wait4(int(pid), &ws, 0, nil)
	return "ok"
}

func errnoOf(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// lyingChild speaks the protocol and sets its limits but claims isolation it
// never put in place.
func lyingChild() int {
	mem, _ := strconv.ParseInt(os.Getenv(envMemory), 10, 64)
	cpu, _ := strconv.ParseInt(os.Getenv(envCPU), 10, 64)
	lim, err := applySelfLimits(mem, cpu)
	if err != nil {
		return exitProtocol
	}
	cwd, _ := os.Getwd()
	claim := &Isolation{FDsOK: true, Cwd: cwd, UID: 65534, GID: 65534, NoNewPrivs: true, LandlockABI: 7, Seccomp: true, NetNamespace: true}
	w := &eventWriter{w: os.NewFile(reportFD, "report")}
	if w.send(&event{T: evReady, Limits: &lim, Isolation: claim}) != nil {
		return exitProtocol
	}
	b, _ := io.ReadAll(os.Stdin)
	if len(b) > 0 {
		return 42 // the payload must never reach a child that lied
	}
	return exitOK
}

// probeSetup creates what the probe child tries to reach.
func probeSetup(t *testing.T) []byte {
	t.Helper()
	dir, err := os.MkdirTemp("", "sandbox-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Readable by everybody, so only Landlock can deny opening it.
	file := filepath.Join(dir, "readable")
	if err := os.WriteFile(file, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	// Dup leaves close-on-exec off: the child inherits this descriptor
	// across execve unless it closes it itself.
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(probeTargets{File: file, Addr: ln.Addr().String(), FD: fd, Dev: st.Dev, Ino: st.Ino})
	return b
}

func TestRunIsolationDeniesFromInsideTheChild(t *testing.T) {
	payload := probeSetup(t) // not parallel: the non-CLOEXEC fd leaks into every fork
	spec := testSpec(t, "probe")
	r := run(t, spec, string(payload))
	wantOutcome(t, r, OutcomeParsedFine)
	d := r.Result.Details
	t.Logf("probe: %v", d)
	iso := r.Isolation

	t.Run("fds", func(t *testing.T) {
		if d["fd"] == "inherited" {
			t.Errorf("the test's non-close-on-exec fd is still open in the child")
		}
		if !iso.FDsOK || iso.FDsClosed < 1 {
			t.Errorf("report: fds_ok %v, fds_closed %d", iso.FDsOK, iso.FDsClosed)
		}
	})
	t.Run("cwd", func(t *testing.T) {
		if d["cwd"] != iso.Cwd || !strings.HasPrefix(filepath.Base(iso.Cwd), "edihub-sandbox-") {
			t.Errorf("child cwd %q, report %q", d["cwd"], iso.Cwd)
		}
		if wd, _ := os.Getwd(); d["cwd"] == wd {
			t.Errorf("child runs in the test's working directory")
		}
		if _, err := os.Stat(iso.Cwd); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("working directory not removed after the run: %v", err)
		}
	})
	t.Run("no_new_privs", func(t *testing.T) {
		if d["no_new_privs"] != "1/ok" || !iso.NoNewPrivs {
			t.Errorf("prctl says %s, report %v", d["no_new_privs"], iso.NoNewPrivs)
		}
	})
	t.Run("unprivileged", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("tests not running as root: the child keeps the test's uid")
		}
		if d["uid"] != "65534" || d["euid"] != "65534" || d["gid"] != "65534" || d["groups"] != "[]" {
			t.Errorf("uid %s euid %s gid %s groups %s, want nobody without groups", d["uid"], d["euid"], d["gid"], d["groups"])
		}
		if iso.UID != 65534 || iso.GID != 65534 {
			t.Errorf("report uid %d gid %d", iso.UID, iso.GID)
		}
	})
	t.Run("landlock", func(t *testing.T) {
		if abi, _ := llsys.LandlockGetABIVersion(); abi <= 0 {
			if iso.LandlockABI != 0 {
				t.Errorf("report claims Landlock ABI %d on a kernel without it", iso.LandlockABI)
			}
			t.Skip("kernel without Landlock")
		}
		// The file and the directory are open to nobody by their modes.
		for _, k := range []string{"open_file", "open_shadow", "readdir_cwd", "create_in_cwd"} {
			if d[k] != "EACCES" {
				t.Errorf("%s: %s, want EACCES", k, d[k])
			}
		}
		if iso.LandlockABI < 1 {
			t.Errorf("report: landlock ABI %d", iso.LandlockABI)
		}
	})
	t.Run("seccomp", func(t *testing.T) {
		for _, k := range []string{"socket_inet", "socket_unix", "dial", "exec", "execve", "unshare_newuser", "clone_newuser"} {
			if d[k] != "EPERM" {
				t.Errorf("%s: %s, want EPERM from the seccomp filter", k, d[k])
			}
		}
		for _, k := range parentProbes {
			if d[k] != "EPERM" {
				t.Errorf("%s on the parent: %s, want EPERM from the seccomp filter", k, d[k])
			}
		}
		for _, k := range []string{"prlimit64_self", "setpriority_self", "kill_self", "tgkill_self"} {
			if d[k] != "ok" {
				t.Errorf("%s: %s, want ok (the child may touch itself)", k, d[k])
			}
		}
		if d["seccomp_mode"] != "2/ok" || !iso.Seccomp {
			t.Errorf("prctl says seccomp mode %s, report %v", d["seccomp_mode"], iso.Seccomp)
		}
	})
	t.Run("net_namespace", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("a new network namespace needs root")
		}
		mine, err := os.Readlink("/proc/self/ns/net")
		if err != nil {
			t.Fatal(err)
		}
		if d["netns"] == "" || d["netns"] == mine || !iso.NetNamespace {
			t.Errorf("child netns %q, test's %q, report %v", d["netns"], mine, iso.NetNamespace)
		}
	})
	if len(iso.Missing) != 0 {
		t.Logf("layers not in force here: %v", iso.Missing)
	}
}

// The parent must not take the child's word for it: a child that claims
// everything but isolated nothing is caught in /proc and, with
// RequireIsolation, never gets the payload.
func TestRunRequireIsolationRejectsALyingChild(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, "lying-child")
	spec.RequireIsolation = []Layer{LayerSeccomp, LayerNoNewPrivs}
	_, err := Run(context.Background(), spec, []byte("poison"))
	var ie *InfraError
	if !errors.As(err, &ie) || ie.Op != "isolation" {
		t.Fatalf("error %v, want an isolation InfraError", err)
	}
	for _, l := range spec.RequireIsolation {
		if !strings.Contains(err.Error(), string(l)) {
			t.Errorf("error does not name %s: %v", l, err)
		}
	}

	// Without the requirement the run goes on and the report tells the truth.
	spec.RequireIsolation = nil
	r := run(t, spec, "")
	if r.Isolation.Seccomp || r.Isolation.NoNewPrivs || r.Isolation.Missing[LayerSeccomp] == "" {
		t.Errorf("report believed the child: %+v", r.Isolation)
	}
}

func TestRunRequireIsolationAllInForce(t *testing.T) {
	t.Parallel()
	if abi, _ := llsys.LandlockGetABIVersion(); abi <= 0 || os.Geteuid() != 0 {
		t.Skip("needs root and Landlock for every layer")
	}
	spec := testSpec(t, "fine")
	spec.RequireIsolation = AllLayers
	r := run(t, spec, "x")
	wantOutcome(t, r, OutcomeParsedFine)
	if r.Isolation.Missing != nil {
		t.Errorf("missing: %v", r.Isolation.Missing)
	}
}

func TestSpecRejectsUnknownLayer(t *testing.T) {
	s := &Spec{Path: "/x", RequireIsolation: []Layer{"chroot"}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `"chroot"`) {
		t.Errorf("Validate: %v", err)
	}
}

// verifyLimits is the parent's check when prlimit(2) is denied: a child
// that did not limit itself must fail it.
func TestVerifyLimitsRejectsLooseChild(t *testing.T) {
	t.Parallel()
	cmd := testCommand(t, "no-childmain")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	want := Limits{DataBytes: 1 << 30, AddressSpaceBytes: 4 << 30, CPUSeconds: 2}
	if _, err := verifyLimits(cmd.Process.Pid, want); err == nil || !strings.Contains(err.Error(), "Max cpu time is unlimited") {
		t.Errorf("verifyLimits on an unlimited child: %v", err)
	}
	self := func(resource int, newLim, old *unix.Rlimit) error {
		return unix.Prlimit(cmd.Process.Pid, resource, newLim, old)
	}
	if _, err := applyLimits(self, want); err != nil {
		t.Fatal(err)
	}
	l, err := verifyLimits(cmd.Process.Pid, want)
	if err != nil || l.CPUSeconds != 2 || l.DataBytes != 1<<30 || l.AppliedBy != "child, verified by parent" {
		t.Errorf("verifyLimits on a limited child: %+v, %v", l, err)
	}
}

// A start refused because of the network namespace is retried without one,
// and the report then says the layer is missing instead of claiming it.
func TestNetnsFallbackIsReported(t *testing.T) {
	iso := &isoSetup{netns: true}
	if iso.retryWithoutNetns(&os.SyscallError{Syscall: "clone", Err: syscall.EACCES}) {
		t.Errorf("retry on EACCES: that is not the namespace's fault")
	}
	if !iso.retryWithoutNetns(&os.SyscallError{Syscall: "clone", Err: syscall.EPERM}) || iso.netns {
		t.Fatalf("no retry without a namespace after EPERM")
	}
	if iso.retryWithoutNetns(syscall.EPERM) {
		t.Errorf("retried twice")
	}
	v := verifyIsolation(os.Getpid(), &Isolation{NetNamespace: true}, iso)
	if v.NetNamespace || v.Missing[LayerNetNamespace] == "" {
		t.Errorf("netns claimed without one: %+v", v)
	}
}

// parentProbes are the calls parentProbe tries on the child's parent (the
// test, standing in for the hub), each harmless if it succeeded: a read of
// a limit, the priority, CPU set and I/O class it already has, signal 0.
var parentProbes = []string{"prlimit64_parent", "setpriority_parent", "sched_setaffinity_parent", "ioprio_set_parent",
	"kill_parent", "kill_group", "setpriority_user",
	"tgkill_parent", "tkill_parent", "rt_sigqueueinfo_parent", "rt_tgsigqueueinfo_parent"}

func parentProbe(d map[string]string) {
	ppid := os.Getppid()
	var lim unix.Rlimit
	d["prlimit64_parent"] = errnoOf(unix.Prlimit(ppid, unix.RLIMIT_NOFILE, nil, &lim))
	d["prlimit64_self"] = errnoOf(unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &lim))
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, ppid)
	if err == nil {
		err = unix.Setpriority(unix.PRIO_PROCESS, ppid, 20-prio)
	}
	d["setpriority_parent"] = errnoOf(err)
	own, _ := unix.Getpriority(unix.PRIO_PROCESS, 0)
	d["setpriority_self"] = errnoOf(unix.Setpriority(unix.PRIO_PROCESS, 0, 20-own))
	d["setpriority_user"] = errnoOf(unix.Setpriority(unix.PRIO_USER, os.Getuid(), 20-own))
	var set unix.CPUSet
	err = unix.SchedGetaffinity(ppid, &set)
	if err == nil {
		err = unix.SchedSetaffinity(ppid, &set)
	}
	d["sched_setaffinity_parent"] = errnoOf(err)
	const ioprioWhoProcess = 1
	io, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(ppid), 0)
	if e == 0 {
		_, _, e = unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(ppid), io)
	}
	d["ioprio_set_parent"] = errnoOf(errnoErr(e))
	d["kill_parent"] = errnoOf(unix.Kill(ppid, 0))
	d["kill_group"] = errnoOf(unix.Kill(0, 0))
	d["kill_self"] = errnoOf(unix.Kill(os.Getpid(), 0))
	d["tgkill_parent"] = errnoOf(unix.Tgkill(ppid, ppid, 0))
	d["tgkill_self"] = errnoOf(unix.Tgkill(os.Getpid(), unix.Gettid(), 0))
	// tkill takes a thread id: the parent's main thread has the parent's pid.
	_, _, e = unix.Syscall(unix.SYS_TKILL, uintptr(ppid), 0, 0)
	d["tkill_parent"] = errnoOf(errnoErr(e))
	// si_code SI_QUEUE (-1), as the kernel demands of a process signalling
	// another; signal 0 only checks that the target may be reached.
	var info [128]byte
	info[8] = 0xff
	info[9], info[10], info[11] = 0xff, 0xff, 0xff
	_, _, e = unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(ppid), 0, uintptr(unsafe.Pointer(&info[0])))
	d["rt_sigqueueinfo_parent"] = errnoOf(errnoErr(e))
	_, _, e = unix.Syscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(ppid), uintptr(ppid), 0, uintptr(unsafe.Pointer(&info[0])), 0, 0)
	d["rt_tgsigqueueinfo_parent"] = errnoOf(errnoErr(e))
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	testChildMains["seccomp-signals"] = seccompSignalsChild
}

// seccompSignalsChild installs the seccomp filter alone (no Landlock, whose
// ABI 6 signal scope would refuse the same calls, and no uid switch) and
// then keeps goroutines in tight loops while the GC runs, so the runtime
// must preempt them with tgkill on its own threads. Then it tries every
// signalling call on its parent and on itself and prints the errno names.
func seccompSignalsChild() int {
	if err := installSeccomp(); err != nil {
		os.Stderr.WriteString(err.Error())
		return 3
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < 2*runtime.GOMAXPROCS(0); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for !stop.Load() {
				for j := 0; j < 1<<20; j++ { // no call: only a signal preempts this
					n += j
				}
			}
			_ = n
		}()
	}
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
		runtime.GC() // stops the world: every busy goroutine must be preempted
	}
	stop.Store(true)
	wg.Wait()

	d := map[string]string{}
	ppid, self := os.Getppid(), os.Getpid()
	d["tgkill_parent"] = errnoOf(unix.Tgkill(ppid, ppid, 0))
	d["tgkill_self"] = errnoOf(unix.Tgkill(self, unix.Gettid(), 0))
	_, _, e := unix.Syscall(unix.SYS_TKILL, uintptr(ppid), 0, 0)
	d["tkill_parent"] = errnoOf(errnoErr(e))
	var info [128]byte
	info[8], info[9], info[10], info[11] = 0xff, 0xff, 0xff, 0xff // si_code SI_QUEUE (-1)
	_, _, e = unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(ppid), 0, uintptr(unsafe.Pointer(&info[0])))
	d["rt_sigqueueinfo_parent"] = errnoOf(errnoErr(e))
	_, _, e = unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(self), 0, uintptr(unsafe.Pointer(&info[0])))
	d["rt_sigqueueinfo_self"] = errnoOf(errnoErr(e))
	_, _, e = unix.Syscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(ppid), uintptr(ppid), 0, uintptr(unsafe.Pointer(&info[0])), 0, 0)
	d["rt_tgsigqueueinfo_parent"] = errnoOf(errnoErr(e))
	_, _, e = unix.Syscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(self), uintptr(unix.Gettid()), 0, uintptr(unsafe.Pointer(&info[0])), 0, 0)
	d["rt_tgsigqueueinfo_self"] = errnoOf(errnoErr(e))
	d["kill_parent"] = errnoOf(unix.Kill(ppid, 0))
	if err := json.NewEncoder(os.Stdout).Encode(d); err != nil {
		return 4
	}
	return 0
}

// The seccomp layer on its own keeps the child from signalling its parent
// by any call, while the Go runtime still preempts the child's own busy
// threads with tgkill (a filter that refused those would hang the GC).
// Run as root, no other layer (uid, Landlock) refuses these calls here.
func TestSeccompRefusesSignalsToTheParent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testBinary(t), "-test.run=^$")
	cmd.Env = []string{childModeVar + "=seccomp-signals", "GORACE=atexit_sleep_ms=0"}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("child hung under the filter (busy goroutines not preempted?): %v", ctx.Err())
	}
	if err != nil {
		t.Fatalf("child: %v (%s)", err, out)
	}
	var d map[string]string
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("child output %q: %v", out, err)
	}
	t.Logf("signals: %v", d)
	for _, k := range []string{"tgkill_parent", "tkill_parent", "rt_sigqueueinfo_parent", "rt_tgsigqueueinfo_parent", "kill_parent"} {
		if d[k] != "EPERM" {
			t.Errorf("%s: %s, want EPERM from the seccomp filter", k, d[k])
		}
	}
	for _, k := range []string{"tgkill_self", "rt_sigqueueinfo_self", "rt_tgsigqueueinfo_self"} {
		if d[k] != "ok" {
			t.Errorf("%s: %s, want ok (the child may signal itself)", k, d[k])
		}
	}
}

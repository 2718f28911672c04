// Package sandbox runs one message's analysis in an isolated child process
// with CPU, memory and wall-clock caps, and turns whatever happens to the
// child into a forensic Report.
//
// The hub calls Run for a quarantined message; the child is the same binary
// (`edihub sandbox exec --stage S`), whose main calls ChildMain with an
// Analyzer (guard, parser, the failing stage). The package knows nothing
// about EDIFACT and imports nothing from this module.
//
// # Protocol
//
//	parent                                   child (ChildMain)
//	Start: env cleared, stdin pipe,          close inherited fds above 3
//	  report pipe as fd 3, own process group, limit itself: RLIMIT_DATA, RLIMIT_AS, RLIMIT_CPU
//	  empty cwd, nobody (if root), new netns   SetMemoryLimit, SIGXCPU handler
//	                                         no_new_privs, seccomp, Landlock
//	                                  <- fd3 {"t":"ready", limits, isolation}
//	measure /proc/<pid>/status, prlimit:     block reading stdin
//	  verify, lower what is looser;
//	  verify isolation in /proc
//	write payload, close stdin        ->     run the Analyzer
//	                                  <- fd3 {"t":"progress"} per callback
//	sample VmHWM/VmData every 20 ms   <- fd3 {"t":"result"|"error"|"panic"|"cpu-limit"}
//	waitid(WNOWAIT), kill group, reap, classify
//
// Records are JSON lines on a dedicated pipe rather than stdout, written
// unbuffered, and the parent reads them while the child runs: the last
// progress before a SIGKILL is never stuck in a buffer. The parent keeps a
// bounded head, tail and crash section of stdout+stderr and skips records
// over MaxReportBytes, so a child cannot grow the parent's memory.
//
// # Limits: why this way
//
// os/exec cannot call setrlimit between fork and exec, so there are two
// places to set limits: the child on itself, or the parent with prlimit(2)
// after Start. Either alone has a hole (a child that does not cooperate; a
// parent denied prlimit), so both are done, and the payload — the only
// dangerous input — is released only afterwards: the child sets its own
// limits first thing in ChildMain and says "ready"; the parent measures the
// waiting child, reads its limits with prlimit and lowers any that are
// looser than the spec; only then does it write stdin. The child runs
// unlimited only during Go runtime start-up, which never sees the payload.
// If the parent cannot verify but the child reported success, Run goes on
// and notes it; if neither worked, Run fails with an InfraError.
//
// RLIMIT_AS alone does not work for a Go child. Measured on Linux/amd64 with
// Go 1.26: a Go process has VmSize ≈ 1.2 GiB before main (PROT_NONE
// reservations for heap arenas and the page allocator's summaries); under
// `ulimit -v 262144` or even 512 MiB the runtime dies at start-up with
// "failed to reserve page summary memory", and prlimit'ing AS=256 MiB after
// start makes the very first heap growth fail. Reserved-but-untouched
// address space is not in VmData, while heap, stacks and anything written
// are (RLIMIT_DATA covers mmap since Linux 4.7). So:
//
//   - RLIMIT_DATA = start-up VmData + Spec.MemoryLimit is the memory cap;
//     "start-up" also absorbs the race detector's ~300 MiB of shadow data;
//   - RLIMIT_AS = start-up VmSize + 4×MemoryLimit is only a backstop for
//     mappings DATA does not count (shared or read-only file mappings);
//   - debug.SetMemoryLimit(7/8 of MemoryLimit) makes the GC work before the
//     cap, so a bounded but garbage-heavy analysis is not reported as
//     memory-cap;
//   - RLIMIT_CPU = ceil(CPULimit) soft (SIGXCPU: the child sends the stack of
//     every goroutine, which shows where it spun, and exits), +1 s hard
//     (SIGKILL if the handler cannot run).
//
// The wall clock (Spec.Timeout) is the parent's timer: on expiry it SIGKILLs
// the child's process group. Pdeathsig kills the child if the hub dies; the
// goroutine in Run is pinned to its OS thread because Pdeathsig follows the
// thread that forked, not the process.
//
// # Isolation
//
// The limits stop a payload from exhausting the host; the isolation stops a
// payload that takes over the analysis (a parser exploit) from reaching
// anything. Layers (type Layer), each best effort and reported in
// Report.Isolation, never claimed when not in force:
//
//   - fds: the child closes every descriptor above fd 3 that lacks
//     close-on-exec, first thing in ChildMain. os/exec only closes the
//     hub's close-on-exec ones; anything the hub's own parent leaked (a
//     shell's, a supervisor's) would otherwise reach the analysis. The Go
//     runtime opens everything with O_CLOEXEC, so that test is exact.
//   - cwd: a fresh empty directory under Spec.TempDir, removed after.
//   - unprivileged: a root hub starts the child as Spec.UID/GID (nobody)
//     with no supplementary groups. It execs /proc/self/fd/4, the binary
//     opened by the hub, so the binary's directories need not be
//     searchable by nobody (go test builds in 0700 directories).
//     A root hub without CAP_SYS_RESOURCE then cannot prlimit(2) the child,
//     so it verifies the child's own limits in /proc/<pid>/limits instead
//     (Limits.AppliedBy "child, verified by parent").
//   - net_namespace: a root hub clones the child into a new network
//     namespace (only lo, down); refused (EPERM/EINVAL/ENOSPC), it starts
//     the child without one and notes why.
//   - no_new_privs and seccomp: a denylist filter (seccompDenied) on every
//     thread: socket, connect, bind, listen, accept, execve, execveat,
//     ptrace, io_uring, bpf, mount, namespaces, keys, modules fail with
//     EPERM, so the child sees an error rather than dying; so does clone
//     with a namespace flag. clone3, whose flags a filter cannot read,
//     fails with ENOSYS, so that Go and glibc fall back to clone. A second
//     filter refuses foreign-arch calls (i386 via int 0x80), which the
//     first lets through. A denylist, because the Go runtime needs mmap,
//     clone, futex, signals and more, and its needs change between releases.
//     Argument filters (parentGuards, built with the child's own pid, read
//     after exec) keep prlimit64, sched_set*, setpriority, ioprio_set,
//     kill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo to the child
//     itself; tkill is refused. Installed after Landlock: libpsx signals
//     every thread with tkill.
//   - landlock: the newest ABI the kernel has (best effort): no filesystem
//     access at all (open, exec, readdir, create), and from ABI 4 no TCP
//     connect/bind, from ABI 6 no signals or abstract unix sockets outside
//     the domain. Descriptors opened before (the pipes, /proc/self/status
//     for the peak RSS) keep working. go-landlock applies it to all threads
//     through psx (cgo) until ABI 8 offers TSYNC.
//
// Everything the child needs from files happens before: reading
// /proc/self/status for the limits, the runtime's start-up. After it, an
// analysis cannot load time zones (time.Local falls back to UTC) or any
// other file. The parent checks in /proc what it can (ids, NoNewPrivs,
// Seccomp mode, network namespace, cwd, fdinfo flags) and overrides the
// child's claims; only the Landlock ABI and the closed-fd count are the
// child's word. Spec.RequireIsolation turns missing layers into an
// InfraError before the payload is released.
//
// Not isolated: the child shares the hub's PID, IPC, UTS and mount
// namespaces. Without Landlock it could read world-readable files and
// /proc; without Landlock ABI 6 it could signal other children, which all
// run as the same nobody (seccomp keeps it from signalling the hub, its
// parent, or any other process by pid). A non-root hub gets neither the uid switch nor a
// network namespace (no user namespace is set up); seccomp and Landlock
// then carry the weight.
//
// # Classifying
//
// In order: a cpu-limit record; the parent's wall timer; SIGXCPU, or SIGKILL
// with CPU time at the limit; an error or panic record (memory-cap if its
// text is an allocation failure, else reproduced-error or panic); a result
// record with exit 0 (parsed-fine); for a child that died on its own, the
// Go runtime's output (fatal "out of memory", errno 12, pthread_create
// failures, an unrecovered "panic:"), then the parent's last VmData sample
// near the cap; SIGKILL near the memory cap (the kernel OOM killer); any
// other signal (killed-by-signal); anything else is "crashed".
//
// Peak memory is the child's VmHWM (sampled by the parent, and reported by
// the child at the end), not rusage's ru_maxrss: with vfork+exec the child
// inherits the parent's RSS high-water mark (measured: /bin/true started by
// a Go process holding 400 MiB reports ru_maxrss = 412 MiB).
//
// # Infrastructure failures
//
// Run returns an error only when the sandbox itself failed (*InfraError:
// start, handshake, limits, pipes), the spec is invalid, or ctx was
// cancelled. A Breaker (breaker.go) counts consecutive infrastructure
// failures and stops forking doomed children until a cool-down has passed.
//
// Linux only; on other systems Run and ChildMain return an error rather than
// run a poison message without caps or isolation.
package sandbox

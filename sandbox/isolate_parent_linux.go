//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// isoSetup is what the parent prepared for one child's isolation.
type isoSetup struct {
	dir      string // the child's working directory, removed afterwards
	uid, gid int    // ids to switch to; only used when asRoot
	asRoot   bool
	netns    bool // ask for CLONE_NEWNET
}

// prepareIsolation creates the child's empty working directory. As root it
// also plans the switch to s.UID/GID (the directory is handed to that user)
// and a new network namespace; without root neither is possible.
func prepareIsolation(s *Spec) (*isoSetup, error) {
	dir, err := os.MkdirTemp(s.TempDir, "edihub-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("create working directory: %w", err)
	}
	iso := &isoSetup{dir: dir, uid: s.UID, gid: s.GID, asRoot: os.Geteuid() == 0}
	if iso.asRoot {
		iso.netns = true
		if err := os.Chown(dir, s.UID, s.GID); err != nil {
			iso.cleanup()
			return nil, fmt.Errorf("hand working directory to %d:%d: %w", s.UID, s.GID, err)
		}
	}
	return iso, nil
}

// execFD is the descriptor number of the binary in the child, after the
// report pipe (ExtraFiles[1]).
const execFD = reportFD + 1

// openBinary opens path (O_PATH, as the hub) when the child is to switch
// users, and returns what to exec instead: /proc/self/fd/4 in the child is
// the binary itself, so the unprivileged user needs execute permission on
// the file but not search permission on its directories (a go test binary
// lives in a 0700 directory). The child closes fd 4 with the other
// inherited descriptors. Otherwise it returns path and no file.
func (iso *isoSetup) openBinary(path string) (string, *os.File, error) {
	if !iso.asRoot {
		return path, nil, nil
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return "/proc/self/fd/" + strconv.Itoa(execFD), os.NewFile(uintptr(fd), path), nil
}

func (iso *isoSetup) cleanup() error {
	if err := os.RemoveAll(iso.dir); err != nil {
		return fmt.Errorf("remove working directory: %w", err)
	}
	return nil
}

// sysProcAttr adds the credential switch and the network namespace to the
// process group and parent-death settings of sysProcAttr.
func (iso *isoSetup) sysProcAttr() *syscall.SysProcAttr {
	a := sysProcAttr()
	if iso.asRoot {
		// Groups empty (not nil): drop root's supplementary groups too.
		a.Credential = &syscall.Credential{Uid: uint32(iso.uid), Gid: uint32(iso.gid), Groups: []uint32{}}
	}
	if iso.netns {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	return a
}

// retryWithoutNetns reports whether a failed start may succeed without a new
// network namespace (denied by a container's seccomp profile, or the
// namespace limit reached), and turns it off.
func (iso *isoSetup) retryWithoutNetns(err error) bool {
	if !iso.netns || !(errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC)) {
		return false
	}
	iso.netns = false
	return true
}

// verifyIsolation checks in /proc what the waiting child claims, the way
// enforceLimits checks its limits: ids, no_new_privs, seccomp mode, network
// namespace, working directory and open descriptors are the parent's own
// observations. Only the Landlock ABI and the count of closed descriptors
// are taken from the child, as /proc does not show them.
func verifyIsolation(pid int, claimed *Isolation, setup *isoSetup) Isolation {
	var iso Isolation
	if claimed != nil {
		iso = *claimed
		iso.Missing = nil
		for l, why := range claimed.Missing {
			iso.miss(l, "%s", why)
		}
	} else {
		for _, l := range AllLayers {
			iso.miss(l, "the child did not report its isolation")
		}
	}
	proc := "/proc/" + strconv.Itoa(pid)

	st, err := readIsoStatus(proc + "/status")
	if err != nil {
		for _, l := range []Layer{LayerUnprivileged, LayerNoNewPrivs, LayerSeccomp} {
			iso.miss(l, "cannot verify: %v", err)
		}
		iso.UID, iso.GID, iso.NoNewPrivs, iso.Seccomp = 0, 0, false, false
	} else {
		iso.UID, iso.GID = st.uid, st.gid
		if st.uid == 0 || st.gid == 0 {
			iso.miss(LayerUnprivileged, "a real, effective, saved or fs uid or gid is 0")
		}
		iso.NoNewPrivs = st.noNewPrivs
		// Mode 2 alone could be a filter inherited from the hub's container.
		iso.Seccomp = iso.Seccomp && st.seccomp == 2
		if claimed != nil && claimed.Seccomp && st.seccomp != 2 {
			iso.miss(LayerSeccomp, "child claims a filter but /proc shows seccomp mode %d", st.seccomp)
		}
	}

	iso.NetNamespace = false
	if !setup.netns {
		iso.miss(LayerNetNamespace, "needs root or CAP_SYS_ADMIN (or was refused at start)")
	} else if mine, err := os.Readlink("/proc/self/ns/net"); err != nil {
		iso.miss(LayerNetNamespace, "cannot verify: %v", err)
	} else if theirs, err := os.Readlink(proc + "/ns/net"); err != nil {
		iso.miss(LayerNetNamespace, "cannot verify: %v", err)
	} else if mine == theirs {
		iso.miss(LayerNetNamespace, "child shares the hub's %s", mine)
	} else {
		iso.NetNamespace = true
	}

	iso.Cwd = ""
	if cwd, err := os.Readlink(proc + "/cwd"); err != nil {
		iso.miss(LayerCwd, "cannot verify: %v", err)
	} else if cwd != setup.dir {
		iso.miss(LayerCwd, "child runs in %s, not in %s", cwd, setup.dir)
	} else if names, err := readDirNames(cwd); err != nil || len(names) != 0 {
		iso.miss(LayerCwd, "working directory not empty (%d entries, %v)", len(names), err)
	} else {
		iso.Cwd = cwd
	}

	if leaked, err := inheritedFDs(proc); err != nil {
		iso.FDsOK = false
		iso.miss(LayerFDs, "cannot verify: %v", err)
	} else if len(leaked) > 0 {
		iso.FDsOK = false
		iso.miss(LayerFDs, "still open without close-on-exec: %s", strings.Join(leaked, ", "))
	}
	iso.finish()
	return iso
}

type isoStatus struct {
	uid, gid   int // 0 if any of real, effective, saved, fs is 0
	noNewPrivs bool
	seccomp    int
}

func readIsoStatus(path string) (isoStatus, error) {
	st := isoStatus{seccomp: -1}
	b, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(val)
		if len(fields) == 0 {
			continue
		}
		switch key {
		case "Uid", "Gid":
			id := -1
			for _, f := range fields {
				n, err := strconv.Atoi(f)
				if err != nil {
					return st, fmt.Errorf("parse %s in %s: %w", key, path, err)
				}
				if id == -1 || n == 0 {
					id = n
				}
			}
			if key == "Uid" {
				st.uid = id
			} else {
				st.gid = id
			}
			found++
		case "NoNewPrivs":
			st.noNewPrivs = fields[0] == "1"
			found++
		case "Seccomp":
			st.seccomp, _ = strconv.Atoi(fields[0])
			found++
		}
	}
	if found < 4 {
		return st, fmt.Errorf("%s lacks Uid, Gid, NoNewPrivs or Seccomp", path)
	}
	return st, nil
}

// inheritedFDs lists the child's descriptors above the report pipe that lack
// O_CLOEXEC in /proc/<pid>/fdinfo, with what they point to.
func inheritedFDs(proc string) ([]string, error) {
	names, err := readDirNames(proc + "/fd")
	if err != nil {
		return nil, err
	}
	var leaked []string
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd <= reportFD {
			continue
		}
		info, err := os.ReadFile(proc + "/fdinfo/" + n)
		if err != nil {
			continue // closed meanwhile
		}
		flags := int64(-1)
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				flags, _ = strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			}
		}
		if flags < 0 || flags&syscall.O_CLOEXEC == 0 {
			target, _ := os.Readlink(proc + "/fd/" + n)
			leaked = append(leaked, n+" -> "+target)
		}
	}
	return leaked, nil
}

package sandbox

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Layer names one isolation measure around the child. The values are stable
// strings: they appear in Spec.RequireIsolation and in Isolation.Missing.
type Layer string

const (
	// LayerFDs: the child closed every descriptor it inherited besides
	// stdin, stdout, stderr and the report pipe.
	LayerFDs Layer = "fds"
	// LayerCwd: the child's working directory is a fresh, empty directory
	// that Run removes afterwards.
	LayerCwd Layer = "cwd"
	// LayerNoNewPrivs: prctl(PR_SET_NO_NEW_PRIVS) on every thread, so no
	// execve can gain privileges (set-user-ID, file capabilities).
	LayerNoNewPrivs Layer = "no_new_privs"
	// LayerUnprivileged: the child does not run as root (Run drops to
	// Spec.UID/GID when the hub runs as root).
	LayerUnprivileged Layer = "unprivileged"
	// LayerLandlock: a Landlock domain that grants no filesystem access at
	// all (and, from ABI 4 on, no TCP bind/connect; from ABI 6, no signals or
	// abstract unix sockets to processes outside the domain).
	LayerLandlock Layer = "landlock"
	// LayerSeccomp: a seccomp filter that makes socket, connect, execve and
	// similar calls fail with EPERM (see seccompDenied), and calls on other
	// processes' limits, priority, CPUs and I/O class, and kill, tgkill,
	// rt_sigqueueinfo, rt_tgsigqueueinfo outside itself (parentGuards);
	// tkill is refused outright.
	LayerSeccomp Layer = "seccomp"
	// LayerNetNamespace: the child runs in a network namespace of its own,
	// which has only a loopback interface that is down.
	LayerNetNamespace Layer = "net_namespace"
)

// AllLayers lists every layer, for Spec.RequireIsolation.
var AllLayers = []Layer{LayerFDs, LayerCwd, LayerNoNewPrivs, LayerUnprivileged, LayerLandlock, LayerSeccomp, LayerNetNamespace}

// Isolation says which isolation measures were in force in the child when the
// payload was released to it. A layer the kernel or the hub's privileges do
// not allow is never claimed: it is false/zero here and Missing says why.
// Values checked by the parent in /proc (uid, no_new_privs, seccomp, network
// namespace, cwd) override what the child reported.
type Isolation struct {
	// FDsClosed is how many inherited descriptors (opened by the hub or its
	// parent without close-on-exec) the child closed before anything else.
	FDsClosed int `json:"fds_closed"`
	// FDsOK: after closing, no descriptor besides 0-3 and the Go runtime's
	// own close-on-exec ones was open.
	FDsOK bool `json:"fds_ok"`
	// Cwd is the child's working directory, a fresh empty directory.
	Cwd string `json:"cwd"`
	// UID and GID are the child's real and effective ids.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// NoNewPrivs is the no_new_privs bit of the child.
	NoNewPrivs bool `json:"no_new_privs"`
	// LandlockABI is the Landlock ABI version the child enforced (the
	// kernel's, capped at what go-landlock knows); 0 means no Landlock.
	LandlockABI int `json:"landlock_abi"`
	// Seccomp: the child's seccomp filter is installed (mode 2 in /proc).
	Seccomp bool `json:"seccomp"`
	// NetNamespace: the child's network namespace differs from the hub's.
	NetNamespace bool `json:"net_namespace"`
	// Missing maps each layer not in force to the reason, e.g.
	// "landlock": "not supported by the kernel (ABI 0)".
	Missing map[Layer]string `json:"missing,omitempty"`
}

// InForce reports whether layer l was in force.
func (i *Isolation) InForce(l Layer) bool {
	switch l {
	case LayerFDs:
		return i.FDsOK
	case LayerCwd:
		return i.Cwd != ""
	case LayerNoNewPrivs:
		return i.NoNewPrivs
	case LayerUnprivileged:
		return i.UID != 0 && i.GID != 0
	case LayerLandlock:
		return i.LandlockABI > 0
	case LayerSeccomp:
		return i.Seccomp
	case LayerNetNamespace:
		return i.NetNamespace
	}
	return false
}

func (i *Isolation) miss(l Layer, format string, args ...any) {
	if i.Missing == nil {
		i.Missing = map[Layer]string{}
	}
	if _, ok := i.Missing[l]; !ok { // the first reason is the root cause
		i.Missing[l] = fmt.Sprintf(format, args...)
	}
}

// finish records a reason for every layer that is not in force, so Missing
// is complete even where nobody wrote one, and drops stale reasons.
func (i *Isolation) finish() {
	for _, l := range AllLayers {
		if i.InForce(l) {
			delete(i.Missing, l)
		} else {
			i.miss(l, "not in force")
		}
	}
	if len(i.Missing) == 0 {
		i.Missing = nil
	}
}

// missing returns the layers of want that are not in force, with reasons.
func (i *Isolation) missing(want []Layer) string {
	var out []string
	for _, l := range want {
		if !i.InForce(l) {
			out = append(out, fmt.Sprintf("%s (%s)", l, i.Missing[l]))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func validLayer(l Layer) bool { return slices.Contains(AllLayers, l) }

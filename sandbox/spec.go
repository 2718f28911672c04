package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Defaults for the zero values in Spec.
const (
	DefaultMemoryLimit    = 256 << 20
	DefaultCPULimit       = 30 * time.Second
	DefaultTimeoutSlack   = 5 * time.Second // Timeout = CPULimit + this
	DefaultMaxReportBytes = 1 << 20
	DefaultMaxStderrBytes = 64 << 10
	DefaultUID            = 65534 // nobody
	DefaultGID            = 65534 // nogroup

	// minMemoryLimit keeps a misconfiguration from producing a child that
	// cannot even read its payload and is then misreported as memory-cap.
	minMemoryLimit = 8 << 20
)

// Environment variables of the child protocol. They are the only variables
// the child gets besides Spec.Env: the parent's environment (NATS
// credentials, tokens) is never inherited.
const (
	envProtocol = "EDIHUB_SANDBOX_PROTOCOL" // protocol version, "1"
	envMemory   = "EDIHUB_SANDBOX_MEMORY"   // Spec.MemoryLimit in bytes
	envCPU      = "EDIHUB_SANDBOX_CPU"      // RLIMIT_CPU soft limit in seconds
	envReportFD = "EDIHUB_SANDBOX_REPORT_FD"

	protocolVersion = "1"
	reportFD        = 3 // first entry of exec.Cmd.ExtraFiles
)

// Spec describes one sandboxed run, in the manner of exec.Cmd. Zero values
// mean the defaults; Run never modifies the caller's Spec.
type Spec struct {
	// Path is the binary to run as the child and Args its arguments (without
	// argv[0]). The hub passes os.Executable() and "sandbox", "exec",
	// "--stage", stage; the child must end up calling ChildMain.
	Path string
	Args []string

	// MemoryLimit is how many bytes of memory the child may use beyond its
	// start-up footprint (RLIMIT_DATA, with an RLIMIT_AS backstop; doc.go
	// explains why not RLIMIT_AS alone). Default 256 MiB.
	MemoryLimit int64

	// CPULimit is the CPU time (user+system, all threads) the child may use:
	// RLIMIT_CPU, whole seconds, rounded up. Default 30s.
	CPULimit time.Duration

	// Timeout is the wall-clock limit from start to exit, including start-up.
	// Default CPULimit + 5s.
	Timeout time.Duration

	// Env is the child's environment in "KEY=value" form. Nothing is
	// inherited: by default the child sees only the protocol variables.
	Env []string

	// MaxReportBytes bounds one record the child sends on the report pipe
	// (the final result with its stack). Default 1 MiB.
	MaxReportBytes int

	// MaxStderrBytes bounds the stderr kept in the report: half from the
	// start (where "fatal error: ..." is), half from the end. Default 64 KiB.
	MaxStderrBytes int

	// UID and GID are who the child runs as when the hub runs as root (a
	// non-root hub cannot change ids; its child keeps the hub's). Default
	// 65534 (nobody): there is deliberately no way to keep root. The file
	// at Path must be executable by that user; its directories need not be
	// searchable (Run execs it through a descriptor it opened as root).
	UID, GID int

	// TempDir is where Run creates the child's empty working directory.
	// Default os.TempDir().
	TempDir string

	// RequireIsolation lists the layers that must be in force before the
	// payload is released (AllLayers for all). If the child reports one
	// missing, Run kills it and fails with an InfraError (Op "isolation").
	// Default none: every layer is best effort and Report.Isolation says
	// which were in force.
	RequireIsolation []Layer
}

// withDefaults returns a copy of s with the zero values filled in.
func (s *Spec) withDefaults() Spec {
	c := *s
	c.Args = append([]string(nil), s.Args...)
	c.Env = append([]string(nil), s.Env...)
	c.RequireIsolation = append([]Layer(nil), s.RequireIsolation...)
	if c.UID == 0 {
		c.UID = DefaultUID
	}
	if c.GID == 0 {
		c.GID = DefaultGID
	}
	if c.MemoryLimit == 0 {
		c.MemoryLimit = DefaultMemoryLimit
	}
	if c.CPULimit == 0 {
		c.CPULimit = DefaultCPULimit
	}
	if c.Timeout == 0 {
		c.Timeout = c.cpuSeconds()*time.Second + DefaultTimeoutSlack
	}
	if c.MaxReportBytes == 0 {
		c.MaxReportBytes = DefaultMaxReportBytes
	}
	if c.MaxStderrBytes == 0 {
		c.MaxStderrBytes = DefaultMaxStderrBytes
	}
	return c
}

// Validate reports whether the spec (after defaults) can be run.
func (s *Spec) Validate() error {
	c := s.withDefaults()
	var errs []error
	if c.Path == "" {
		errs = append(errs, errors.New("Path is empty"))
	}
	if c.MemoryLimit < minMemoryLimit {
		errs = append(errs, fmt.Errorf("MemoryLimit %d is below the minimum of %d bytes", c.MemoryLimit, minMemoryLimit))
	}
	if c.CPULimit < 0 {
		errs = append(errs, fmt.Errorf("CPULimit %s is negative", c.CPULimit))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("Timeout %s is negative", c.Timeout))
	}
	if c.MaxReportBytes < 4096 {
		errs = append(errs, fmt.Errorf("MaxReportBytes %d is below 4096", c.MaxReportBytes))
	}
	if c.MaxStderrBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxStderrBytes %d is negative", c.MaxStderrBytes))
	}
	if c.UID < 0 || c.GID < 0 {
		errs = append(errs, fmt.Errorf("UID %d or GID %d is negative", c.UID, c.GID))
	}
	for _, l := range c.RequireIsolation {
		if !validLayer(l) {
			errs = append(errs, fmt.Errorf("RequireIsolation: unknown layer %q", l))
		}
	}
	for _, kv := range c.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("Env entry %q is not KEY=value", kv))
		} else if k == envProtocol || k == envMemory || k == envCPU || k == envReportFD {
			// The protocol variables are set by Run; letting the caller
			// override them would let it loosen the limits unnoticed.
			errs = append(errs, fmt.Errorf("Env entry %q is reserved for the sandbox protocol", k))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sandbox: invalid spec: %w", err)
	}
	return nil
}

// cpuSeconds is CPULimit rounded up to whole seconds, at least 1: RLIMIT_CPU
// has a resolution of one second.
func (s *Spec) cpuSeconds() time.Duration {
	sec := (s.CPULimit + time.Second - 1) / time.Second
	if sec < 1 {
		sec = 1
	}
	return sec
}

// childEnv is the complete environment of the child.
func (s *Spec) childEnv() []string {
	env := make([]string, 0, len(s.Env)+4)
	env = append(env, s.Env...)
	return append(env,
		envProtocol+"="+protocolVersion,
		envMemory+"="+strconv.FormatInt(s.MemoryLimit, 10),
		envCPU+"="+strconv.FormatInt(int64(s.cpuSeconds()), 10),
		envReportFD+"="+strconv.Itoa(reportFD),
	)
}

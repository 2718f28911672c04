package forensics

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

// Config configures the analysis worker (the `sandbox:` section of
// the config file). It is separate from Config because the worker runs in
// its own process: `edihub serve` starts it as a child, `edihub sandbox`
// runs it alone, and neither needs the other's settings beyond stream names.
type Config struct {
	// Enabled: serve starts the worker as a child process (default true).
	Enabled *bool `yaml:"enabled"`
	// MemoryLimit is what one analysis child may use beyond its start-up
	// footprint: 256MiB by default; accepts 512MiB, 1GiB or plain bytes.
	MemoryLimit ByteSize `yaml:"memory_limit"`
	// CPULimit is the child's CPU time (RLIMIT_CPU, whole seconds); 30s.
	CPULimit time.Duration `yaml:"cpu_limit"`
	// Timeout is the child's wall clock from start to exit; CPULimit+5s.
	Timeout time.Duration `yaml:"timeout"`
	// Concurrency is how many children may run at once (default 1): the
	// worker is a bulkhead, and every child may take MemoryLimit.
	Concurrency int `yaml:"concurrency"`
	// BreakerThreshold infrastructure failures in a row (a child that cannot
	// start or be limited) open the breaker; default 3.
	BreakerThreshold int `yaml:"breaker_threshold"`
	// BreakerCooldown is how long an open breaker waits before one trial.
	BreakerCooldown time.Duration `yaml:"breaker_cooldown"`
	// Bucket is the Object Store bucket for reports and payloads.
	Bucket string `yaml:"bucket"`
	// TicketBucket is the KV bucket for analysis tickets.
	TicketBucket string `yaml:"ticket_bucket"`
	// PoisonStream and AuditStream name the hub's streams (must match
	// streams.poison / streams.audit).
	PoisonStream string `yaml:"poison_stream"`
	AuditStream  string `yaml:"audit_stream"`
	// Consumer is the durable consumer on the poison stream.
	Consumer string `yaml:"consumer"`
	// SummarySubjectPrefix: summaries go to <prefix>.<partner>.
	SummarySubjectPrefix string `yaml:"summary_subject_prefix"`
	// AlertInterval rate-limits the worker's own alerts when it runs alone.
	AlertInterval time.Duration `yaml:"alert_interval"`
	// Replicas of the report and ticket buckets; the command copies it
	// from nats.replicas.
	Replicas int `yaml:"-"`
	// PayloadBucket and UploadStream are the hub's claim check
	// (hub.claim_check.bucket, .upload_stream): a quarantined upload's
	// announcement is analysed on the bytes it names, read from them.
	PayloadBucket string `yaml:"-"`
	UploadStream  string `yaml:"-"`
}

// Defaults of Config.
const (
	DefaultForensicBucket   = "forensic"
	DefaultTicketBucket     = "tickets"
	DefaultForensicsDurable = "forensics"
)

// UseStreams takes the hub's POISON and AUDIT stream names where the
// sandbox section names none, so that renaming a stream in streams is
// enough.
func (c *Config) UseStreams(s wire.StreamNames) {
	c.PoisonStream = cmp.Or(c.PoisonStream, s.Poison)
	c.AuditStream = cmp.Or(c.AuditStream, s.Audit)
}

// UseClaimCheck takes the hub's payload bucket and upload stream.
func (c *Config) UseClaimCheck(bucket, uploadStream string) {
	c.PayloadBucket = cmp.Or(c.PayloadBucket, bucket)
	c.UploadStream = cmp.Or(c.UploadStream, uploadStream)
}

// SetDefaults fills every unset field.
func (c *Config) SetDefaults() {
	if c.Enabled == nil {
		t := true
		c.Enabled = &t
	}
	if c.MemoryLimit == 0 {
		c.MemoryLimit = sandbox.DefaultMemoryLimit
	}
	c.CPULimit = cmp.Or(c.CPULimit, sandbox.DefaultCPULimit)
	c.Timeout = cmp.Or(c.Timeout, c.CPULimit.Round(time.Second)+sandbox.DefaultTimeoutSlack)
	c.Concurrency = cmp.Or(c.Concurrency, 1)
	c.BreakerThreshold = cmp.Or(c.BreakerThreshold, sandbox.DefaultBreakerThreshold)
	c.BreakerCooldown = cmp.Or(c.BreakerCooldown, sandbox.DefaultBreakerCoolDown)
	c.Bucket = cmp.Or(c.Bucket, DefaultForensicBucket)
	c.TicketBucket = cmp.Or(c.TicketBucket, DefaultTicketBucket)
	c.PoisonStream = cmp.Or(c.PoisonStream, wire.DefaultPoisonStream)
	c.AuditStream = cmp.Or(c.AuditStream, wire.DefaultAuditStream)
	c.Consumer = cmp.Or(c.Consumer, DefaultForensicsDurable)
	c.SummarySubjectPrefix = cmp.Or(c.SummarySubjectPrefix, wire.ForensicSubjectPrefix)
	c.AlertInterval = cmp.Or(c.AlertInterval, time.Minute)
	c.PayloadBucket = cmp.Or(c.PayloadBucket, wire.DefaultPayloadBucket)
	c.UploadStream = cmp.Or(c.UploadStream, wire.DefaultUploadStream)
}

// IsEnabled reports whether serve should start the worker.
func (c Config) IsEnabled() bool { return c.Enabled == nil || *c.Enabled }

// Validate reports every setting that cannot work, in one error.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("sandbox."+format, a...)) }
	if c.MemoryLimit < 8<<20 {
		bad("memory_limit: %s is below 8MiB", c.MemoryLimit)
	}
	if c.CPULimit < time.Second {
		bad("cpu_limit: %v, want at least 1s (RLIMIT_CPU counts whole seconds)", c.CPULimit)
	}
	if c.Timeout < c.CPULimit {
		bad("timeout: %v is below cpu_limit %v; a busy child would be reported as a wall timeout", c.Timeout, c.CPULimit)
	}
	if c.Concurrency < 1 || c.Concurrency > 64 {
		bad("concurrency: %d, want 1..64", c.Concurrency)
	}
	if c.BreakerThreshold < 1 {
		bad("breaker_threshold: %d, want >= 1", c.BreakerThreshold)
	}
	if c.BreakerCooldown < 10*time.Millisecond {
		bad("breaker_cooldown: %v is too short", c.BreakerCooldown)
	}
	for name, v := range map[string]string{"bucket": c.Bucket, "ticket_bucket": c.TicketBucket, "consumer": c.Consumer} {
		if v == "" || strings.ContainsAny(v, ".*> \t/\\") {
			bad("%s: %q must be a non-empty name without . * > / or spaces", name, v)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid config: %w", errors.Join(errs...))
	}
	return nil
}

// ByteSize is a size in bytes that YAML may write as 268435456, 256MiB,
// 1GiB or 512KiB: memory caps are easier to read that way.
type ByteSize int64

func (b ByteSize) String() string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return strconv.FormatInt(int64(b>>30), 10) + "GiB"
	case b >= 1<<20 && b%(1<<20) == 0:
		return strconv.FormatInt(int64(b>>20), 10) + "MiB"
	case b >= 1<<10 && b%(1<<10) == 0:
		return strconv.FormatInt(int64(b>>10), 10) + "KiB"
	}
	return strconv.FormatInt(int64(b), 10)
}

// ParseByteSize reads 123, 64KiB, 256MiB or 2GiB (also KB/MB/GB as binary).
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q: want bytes or a number with KiB, MiB or GiB", s)
	}
	return ByteSize(n * mult), nil
}

// UnmarshalYAML accepts a number or a string with a unit.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalYAML writes the readable form.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

// Set and the String above make ByteSize a flag.Value.
func (b *ByteSize) Set(s string) error {
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// spec is the sandbox.Spec of the config's limits for a child at path.
func (c Config) spec(path string, args []string) sandbox.Spec {
	return sandbox.Spec{Path: path, Args: args, MemoryLimit: int64(c.MemoryLimit), CPULimit: c.CPULimit, Timeout: c.Timeout}
}

package hub

import (
	"fmt"
	"strings"
	"time"

	"github.com/edihub/edihub/wire"
)

// Retry modes.
const (
	// ModeStrict retries in place with backoff: order is kept, the
	// partition waits.
	ModeStrict = "strict"
	// ModeTiered moves the message to edi.<stage>.retry.<tier> and lets
	// the partition go on; JetStream delivers it again when its tier is up.
	ModeTiered = "tiered"
)

// RetryConfig says how transient failures are retried.
type RetryConfig struct {
	// Mode is the default for every stage: strict or tiered.
	Mode string `yaml:"mode"`
	// StageModes overrides Mode per stage name.
	StageModes map[string]string `yaml:"stage_modes"`
	// Tiers are the delays of tiered retries, in order.
	Tiers []time.Duration `yaml:"tiers"`
	// MaxAttempts bounds strict in-place retries of transient failures;
	// then the message goes to the DLQ of its last cause.
	MaxAttempts int `yaml:"max_attempts"`
	// ErrorClasses maps an error's Go type (as %T prints it, for example
	// "*net.OpError") to a cause, or to "transient".
	ErrorClasses map[string]string `yaml:"error_classes"`
}

func (c *RetryConfig) setDefaults() {
	setStr(&c.Mode, ModeStrict)
	if len(c.Tiers) == 0 {
		c.Tiers = []time.Duration{5 * time.Second, 30 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}
	}
	setInt(&c.MaxAttempts, len(c.Tiers)+1)
}

func (c *RetryConfig) validate() []error {
	var errs []error
	check := func(where, m string) {
		if m != ModeStrict && m != ModeTiered {
			errs = append(errs, fmt.Errorf("%s: mode %q, want strict or tiered", where, m))
		}
	}
	check("retry.mode", c.Mode)
	for st, m := range c.StageModes {
		check("retry.stage_modes."+st, m)
	}
	for i, t := range c.Tiers {
		if t < time.Second {
			errs = append(errs, fmt.Errorf("retry.tiers[%d]: %v, JetStream schedules have one-second resolution", i, t))
		}
	}
	if c.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("retry.max_attempts: %d, want >= 1", c.MaxAttempts))
	}
	for k, v := range c.ErrorClasses {
		if v != string(Transient) && !wire.ValidCause(v) {
			errs = append(errs, fmt.Errorf("retry.error_classes[%s]: %q is neither transient nor one of %s", k, v, strings.Join(wire.Causes, ", ")))
		}
	}
	return errs
}

func (c *RetryConfig) modeOf(stage string) string {
	if m, ok := c.StageModes[stage]; ok {
		return m
	}
	return c.Mode
}

// dueAt rounds up to the next whole second: schedules fire on seconds, and
// a tier must never be shorter than configured.
func dueAt(now time.Time, d time.Duration) time.Time {
	return now.Add(d).Truncate(time.Second).Add(time.Second)
}

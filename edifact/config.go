package edifact

import "fmt"

// Config is the parse settings of a hub (the hub.edifact section): the
// defaults, and overrides per partner.
type Config struct {
	// MaxSize is the largest interchange accepted, in bytes (10 MiB).
	MaxSize int64 `yaml:"max_size"`
	// MaxSegmentLen and MaxElementLen cap one segment and one element.
	MaxSegmentLen int `yaml:"max_segment_len"`
	MaxElementLen int `yaml:"max_element_len"`
	// Lenient accepts characters outside the declared repertoire (lowercase
	// or UTF-8 under UNOA) as warnings instead of refusing the interchange.
	Lenient bool `yaml:"lenient"`
	// Partners overrides max_size and lenient per partner ID.
	Partners map[string]PartnerConfig `yaml:"partners"`
	// MemoryBudget bounds, in bytes, the memory the parse stage's
	// interchanges are estimated to take together (parse.Budget; this
	// package does not read it). 0: parse.DefaultMemoryBudget.
	MemoryBudget int64 `yaml:"memory_budget"`
}

// PartnerConfig overrides the parse settings for one partner.
type PartnerConfig struct {
	MaxSize int64 `yaml:"max_size"`
	Lenient *bool `yaml:"lenient"`
}

// Options returns the options for a partner.
func (c Config) Options(partner string) *Options {
	o := &Options{MaxSize: c.MaxSize, MaxSegmentLen: c.MaxSegmentLen, MaxElementLen: c.MaxElementLen, Lenient: c.Lenient}
	if p, ok := c.Partners[partner]; ok {
		if p.MaxSize > 0 {
			o.MaxSize = p.MaxSize
		}
		if p.Lenient != nil {
			o.Lenient = *p.Lenient
		}
	}
	return o
}

// SetDefaults fills every unset limit.
func (c *Config) SetDefaults() {
	if c.MaxSize == 0 {
		c.MaxSize = DefaultMaxSize
	}
	if c.MaxSegmentLen == 0 {
		c.MaxSegmentLen = DefaultMaxSegmentLen
	}
	if c.MaxElementLen == 0 {
		c.MaxElementLen = DefaultMaxElementLen
	}
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	if c.MemoryBudget < 0 {
		return fmt.Errorf("edifact: memory_budget %d: want bytes, or 0 for the default", c.MemoryBudget)
	}
	if err := c.Options("").Validate(); err != nil {
		return fmt.Errorf("edifact: %w", err)
	}
	return nil
}

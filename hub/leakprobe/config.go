package leakprobe

import "time"

// Config tunes the built-in DLQ leak probe (the hub.leak_probe section),
// for edge sites that have no Prometheus. configs/alerts.rules.yml says
// the same for those that do.
type Config struct {
	// Interval is how often the probe samples the DLQ.
	Interval time.Duration `yaml:"interval"`
	// GrowthWindow and GrowthThreshold: alert when one DLQ subject grows by
	// more than GrowthThreshold messages within GrowthWindow.
	GrowthWindow    time.Duration `yaml:"growth_window"`
	GrowthThreshold int           `yaml:"growth_threshold"`
	// RatioWindow and RatioThreshold: alert when dead letters exceed this
	// fraction of processed messages within RatioWindow (and at least
	// RatioMinProcessed were processed, so that 1 of 3 is no alarm).
	RatioWindow       time.Duration `yaml:"ratio_window"`
	RatioThreshold    float64       `yaml:"ratio_threshold"`
	RatioMinProcessed int           `yaml:"ratio_min_processed"`
}

// SetDefaults fills every unset field with its default.
func (c *Config) SetDefaults() {
	if c.Interval == 0 {
		c.Interval = 15 * time.Second
	}
	if c.GrowthWindow == 0 {
		c.GrowthWindow = 5 * time.Minute
	}
	if c.GrowthThreshold == 0 {
		c.GrowthThreshold = 10
	}
	if c.RatioWindow == 0 {
		c.RatioWindow = time.Hour
	}
	if c.RatioThreshold == 0 {
		c.RatioThreshold = 0.001
	}
	if c.RatioMinProcessed == 0 {
		c.RatioMinProcessed = 1000
	}
}

package hub

import "time"

// LeakProbeConfig tunes the built-in DLQ leak probe, for edge sites that
// have no Prometheus. configs/alerts.rules.yml says the same for those that
// do.
type LeakProbeConfig struct {
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

func (c *LeakProbeConfig) setDefaults() {
	setDur(&c.Interval, 15*time.Second)
	setDur(&c.GrowthWindow, 5*time.Minute)
	setInt(&c.GrowthThreshold, 10)
	setDur(&c.RatioWindow, time.Hour)
	if c.RatioThreshold == 0 {
		c.RatioThreshold = 0.001
	}
	setInt(&c.RatioMinProcessed, 1000)
}

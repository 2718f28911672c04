package hub

import "testing"

func TestPartnerPipelineSetting(t *testing.T) {
	for _, c := range []struct {
		set, want int
		ok        bool
	}{{0, defaultPartnerPipeline, true}, {1, 1, true}, {4, 4, true}, {64, 64, true}, {65, 65, false}, {-1, -1, false}} {
		cfg := Config{PartnerPipeline: c.set}
		cfg.SetDefaults()
		err := cfg.Validate()
		if cfg.PartnerPipeline != c.want || (err == nil) != c.ok {
			t.Errorf("partner_pipeline %d: %d, %v; want %d, ok %v", c.set, cfg.PartnerPipeline, err, c.want, c.ok)
		}
	}
}

// Left unset, the workers and the pipeline follow a smaller window or
// bound set by hand, rather than make the configuration invalid.
func TestDefaultsFollowASmallerWindow(t *testing.T) {
	for _, c := range []struct {
		window, bound, workers, pipeline int
	}{
		{0, 0, defaultPartitionConcurrency, defaultPartnerPipeline},
		{16, 0, 16, defaultPartnerPipeline},
		{1, 0, 1, defaultPartnerPipeline},
		{0, 4, defaultPartitionConcurrency, 4},
	} {
		cfg := Config{PartitionMaxInFlight: c.window, PartnerMaxInFlight: c.bound}
		cfg.SetDefaults()
		if err := cfg.Validate(); err != nil || cfg.PartitionConcurrency != c.workers || cfg.PartnerPipeline != c.pipeline {
			t.Errorf("window %d, bound %d: workers %d, pipeline %d, %v; want %d, %d, valid", c.window, c.bound, cfg.PartitionConcurrency, cfg.PartnerPipeline, err, c.workers, c.pipeline)
		}
	}
}

func TestPipelineDepth(t *testing.T) {
	for _, c := range []struct{ pipeline, workers, want int }{
		{16, 32, 16}, // the defaults
		{16, 16, 8},  // half the workers, at most
		{4, 2, 1},    // two workers: one partner takes one
		{8, 1, 1},
		{1, 16, 1},
		{64, 64, 32},
	} {
		if got := pipelineDepth(c.pipeline, c.workers); got != c.want {
			t.Errorf("pipelineDepth(%d, %d) = %d, want %d", c.pipeline, c.workers, got, c.want)
		}
	}
}

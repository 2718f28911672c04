package hub

import "testing"

// A partner spills when it holds more than the bound; never when the
// window itself is no larger than the bound.
func TestSpillsOverThePartnerBound(t *testing.T) {
	for _, c := range []struct {
		partnerMax, window, held int
		want                     bool
	}{
		{64, 256, 64, false},
		{64, 256, 65, true},
		{64, 64, 65, false}, // window no larger: the bound is off
		{64, 16, 1000, false},
		{1, 2, 2, true},
	} {
		if got := spills(c.held, spillBound(c.partnerMax, c.window)); got != c.want {
			t.Errorf("partner_max_in_flight %d, window %d, %d held: spills %v, want %v", c.partnerMax, c.window, c.held, got, c.want)
		}
	}
}

// hub.partner_max_in_flight: 64 by default, at least partner_pipeline.
func TestPartnerMaxInFlightSetting(t *testing.T) {
	for _, c := range []struct {
		set, pipeline, want int
		ok                  bool
	}{
		{0, 0, 64, true},
		{1, 0, 1, true},
		{4, 4, 4, true},
		{2, 4, 2, false}, // below the pipeline: its own pipeline would spill it
		{100000, 0, 100000, true},
		{100001, 0, 100001, false},
		{-1, 0, -1, false},
	} {
		cfg := Config{PartnerMaxInFlight: c.set, PartnerPipeline: c.pipeline}
		cfg.SetDefaults()
		err := cfg.Validate()
		if cfg.PartnerMaxInFlight != c.want || (err == nil) != c.ok {
			t.Errorf("partner_max_in_flight %d (pipeline %d): %d, %v; want %d, ok %v", c.set, c.pipeline, cfg.PartnerMaxInFlight, err, c.want, c.ok)
		}
	}
}

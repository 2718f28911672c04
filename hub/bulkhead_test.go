package hub

import (
	"strings"
	"testing"
	"time"
)

func TestBulkheadLimit(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	type ev struct {
		at     time.Duration
		failed bool
	}
	fails := func(n int, at time.Duration) []ev {
		out := make([]ev, n)
		for i := range out {
			out[i] = ev{at, true}
		}
		return out
	}
	oks := func(n int, at time.Duration) []ev {
		out := make([]ev, n)
		for i := range out {
			out[i] = ev{at, false}
		}
		return out
	}
	cat := func(ss ...[]ev) []ev {
		var out []ev
		for _, s := range ss {
			out = append(out, s...)
		}
		return out
	}
	cases := []struct {
		name string
		cfg  BulkheadConfig
		evs  []ev
		over bool
		f, n int
	}{
		{"below min messages", BulkheadConfig{Window: time.Minute, MinMessages: 5, Ratio: 0.5}, fails(4, 0), false, 4, 4},
		{"ratio crossed at min", BulkheadConfig{Window: time.Minute, MinMessages: 5, Ratio: 0.5}, cat(oks(2, 0), fails(3, 0)), true, 3, 5},
		{"ratio not crossed", BulkheadConfig{Window: time.Minute, MinMessages: 5, Ratio: 0.5}, cat(oks(6, 0), fails(3, 0)), false, 3, 9},
		{"absolute limit", BulkheadConfig{Window: time.Minute, MinMessages: 1, MaxFailures: 3}, cat(oks(100, 0), fails(3, 0)), true, 3, 103},
		{"successes alone never", BulkheadConfig{Window: time.Minute, MinMessages: 1, Ratio: 0.01}, oks(50, 0), false, 0, 50},
		{"old failures slide out", BulkheadConfig{Window: time.Minute, MinMessages: 3, MaxFailures: 3},
			cat(fails(2, 0), fails(1, 90*time.Second)), false, 1, 1},
		{"within the window they add up", BulkheadConfig{Window: time.Minute, MinMessages: 3, MaxFailures: 3},
			cat(fails(2, 0), fails(1, 50*time.Second)), true, 3, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newTracker(c.cfg)
			var over bool
			var f, n int
			for _, e := range c.evs {
				over, f, n = tr.record("P", e.failed, t0.Add(e.at))
			}
			if over != c.over || f != c.f || n != c.n {
				t.Fatalf("over %v %d/%d, want %v %d/%d", over, f, n, c.over, c.f, c.n)
			}
			if _, _, n2 := tr.record("Q", false, t0); n2 != 1 {
				t.Fatalf("another partner counted %d, want its own 1", n2)
			}
		})
	}
}

func TestBulkheadResetAndPrune(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := newTracker(BulkheadConfig{Window: time.Minute, MinMessages: 2, MaxFailures: 2})
	tr.record("P", true, t0)
	tr.reset("P")
	if over, f, _ := tr.record("P", true, t0); over || f != 1 {
		t.Fatalf("after reset: over %v failures %d, want 1 and not over", over, f)
	}
	tr.prune(t0.Add(2 * time.Minute))
	if len(tr.partners) != 0 {
		t.Fatalf("prune kept %d partners", len(tr.partners))
	}
}

func TestBulkheadConfigValidate(t *testing.T) {
	var c BulkheadConfig
	c.SetDefaults()
	if errs := c.Validate(); len(errs) != 0 || c.Ratio != 0.5 || c.MinMessages != 20 || c.Window != 5*time.Minute || c.Bucket != DefaultPauseBucket {
		t.Fatalf("defaults %+v: %v", c, errs)
	}
	bad := BulkheadConfig{Window: time.Millisecond, MinMessages: -1, MaxFailures: -1, Ratio: 2}
	errs := bad.Validate()
	var all []string
	for _, e := range errs {
		all = append(all, e.Error())
	}
	for _, want := range []string{"window", "min_messages", "max_failures", "ratio", "bucket"} {
		if !strings.Contains(strings.Join(all, "\n"), "bulkhead."+want) {
			t.Errorf("no error names %s: %v", want, all)
		}
	}
	cfg := fastConfig()
	cfg.Bulkhead = BulkheadConfig{Enabled: true, Window: time.Minute, MinMessages: 5, Ratio: 3}
	cfg.setDefaults()
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "bulkhead.ratio") {
		t.Fatalf("hub config with a bad bulkhead: %v", err)
	}
	cfg.Bulkhead.Enabled = false
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a bulkhead turned off is not checked: %v", err)
	}
}

package leakprobe

import (
	"testing"
	"time"
)

func TestLeakProbeGrowth(t *testing.T) {
	cfg := Config{}
	cfg.SetDefaults()
	p := New(cfg)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	subj := "edi.parse.dlq.schema"
	fired := 0
	step := func(at time.Duration, n uint64) {
		fired += len(p.Observe(Sample{At: t0.Add(at), Depth: map[string]uint64{subj: n}}))
	}
	// 5 dead letters in a minute: quiet
	step(0, 0)
	step(30*time.Second, 3)
	step(60*time.Second, 5)
	if fired != 0 {
		t.Fatalf("fired %d times for 5 messages", fired)
	}
	// a burst of 100 within the window: exactly one alert, however long
	// the burst stays in the window
	for i := 1; i <= 10; i++ {
		step(60*time.Second+time.Duration(i)*15*time.Second, 5+uint64(10*i))
	}
	if fired != 1 {
		t.Fatalf("fired %d times for a burst of 100, want 1", fired)
	}
	// the window slides past the burst: cleared; new growth fires again
	step(20*time.Minute, 105)
	step(21*time.Minute, 130)
	if fired != 2 {
		t.Fatalf("after the burst cleared, a new burst fired %d, want total 2", fired)
	}
}

func TestLeakProbeRatio(t *testing.T) {
	cfg := Config{RatioMinProcessed: 100, RatioThreshold: 0.01}
	cfg.SetDefaults()
	p := New(cfg)
	t0 := time.Now()
	if a := p.Observe(Sample{At: t0}); len(a) != 0 {
		t.Fatal(a)
	}
	if a := p.Observe(Sample{At: t0.Add(time.Minute), Dead: 1, Processed: 500}); len(a) != 0 {
		t.Fatalf("0.2%% fired: %v", a)
	}
	a := p.Observe(Sample{At: t0.Add(2 * time.Minute), Dead: 20, Processed: 1000})
	if len(a) != 1 || a[0].Name != "DeadLetterRatioHigh" {
		t.Fatalf("2%% did not fire: %v", a)
	}
}

// Status names the conditions that fire, in name order, at the last
// sample; none once they cleared.
func TestProbeStatus(t *testing.T) {
	cfg := Config{GrowthThreshold: 1, RatioMinProcessed: 10, RatioThreshold: 0.01}
	cfg.SetDefaults()
	p := New(cfg)
	if s := p.Status(); len(s.Firing) != 0 || !s.LastSample.IsZero() {
		t.Fatalf("before any sample: %+v", s)
	}
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	p.Observe(Sample{At: at})
	p.Observe(Sample{At: at.Add(time.Second), Depth: map[string]uint64{"edi.parse.dlq.schema": 5}, Dead: 5, Processed: 20})
	s := p.Status()
	if got := s.Firing; len(got) != 2 || got[0] != "growth:edi.parse.dlq.schema" || got[1] != "ratio" || !s.LastSample.Equal(at.Add(time.Second)) {
		t.Fatalf("status %+v", s)
	}
	p.Observe(Sample{At: at.Add(2 * time.Hour), Depth: map[string]uint64{"edi.parse.dlq.schema": 5}, Dead: 5, Processed: 20})
	if s := p.Status(); len(s.Firing) != 0 {
		t.Fatalf("cleared conditions still fire: %v", s.Firing)
	}
}

func TestDLQParts(t *testing.T) {
	if st, c := dlqParts("edi.parse.dlq.schema"); st != "parse" || c != "schema" {
		t.Fatalf("%q %q", st, c)
	}
	if st, c := dlqParts("edi.parse.dlq"); st != "" || c != "" {
		t.Fatalf("a short subject split into %q %q", st, c)
	}
}

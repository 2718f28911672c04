package hub

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// BulkheadConfig pauses a partner whose messages keep failing, so that it
// cannot fill its partitions' windows with dead letters and quarantines
// while the others wait. A paused partner's messages wait in INGEST,
// untouched, until an operator resumes it (edihub partner resume).
type BulkheadConfig struct {
	// Enabled turns the bulkhead on (default off: a partner is never
	// paused).
	Enabled bool `yaml:"enabled"`
	// Window is how far back a partner's outcomes count (default 5m).
	Window time.Duration `yaml:"window"`
	// MinMessages is how many settled messages the window must hold before
	// a partner can be paused (default 20): one bad file is no rate.
	MinMessages int `yaml:"min_messages"`
	// MaxFailures pauses a partner with this many failures in the window
	// (0: no absolute limit).
	MaxFailures int `yaml:"max_failures"`
	// Ratio pauses a partner whose failures are at least this share of its
	// settled messages in the window (default 0.5; 0: no ratio limit).
	Ratio float64 `yaml:"ratio"`
	// Bucket is the KV bucket that holds the pauses, seen by every
	// instance (default edihub-paused).
	Bucket string `yaml:"bucket"`
}

// DefaultPauseBucket is the KV bucket of the paused partners.
const DefaultPauseBucket = "edihub-paused"

// SetDefaults fills the unset fields.
func (c *BulkheadConfig) SetDefaults() {
	setDur(&c.Window, 5*time.Minute)
	setInt(&c.MinMessages, 20)
	if c.Ratio == 0 && c.MaxFailures == 0 {
		c.Ratio = 0.5
	}
	setStr(&c.Bucket, DefaultPauseBucket)
}

// Validate reports the settings that cannot work.
func (c *BulkheadConfig) Validate() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("bulkhead."+format, a...)) }
	if c.Window < time.Second || c.Window > 24*time.Hour {
		bad("window: %v, want 1s..24h", c.Window)
	}
	if c.MinMessages < 1 {
		bad("min_messages: %d, want >= 1", c.MinMessages)
	}
	if c.MaxFailures < 0 {
		bad("max_failures: %d, want >= 0", c.MaxFailures)
	}
	if c.Ratio < 0 || c.Ratio > 1 {
		bad("ratio: %v, want 0..1", c.Ratio)
	}
	if c.MaxFailures == 0 && c.Ratio == 0 {
		bad("max_failures and ratio are both 0: set one (or enabled: false)")
	}
	if c.Bucket == "" {
		errs = append(errs, errors.New("bulkhead.bucket is empty"))
	}
	return errs
}

// bulkheadSlices is how many time slices a partner's window is kept in:
// memory per partner is fixed, whatever its rate.
const bulkheadSlices = 10

// outcomeWindow is one partner's settled messages over the window, in
// fixed time slices.
type outcomeWindow struct {
	start    [bulkheadSlices]int64 // slice start, unix nanos
	ok, fail [bulkheadSlices]int
}

// tracker counts each partner's outcomes over the window and says when a
// partner crosses the limit. Pure: time comes from the caller.
type tracker struct {
	cfg      BulkheadConfig
	mu       sync.Mutex
	partners map[string]*outcomeWindow
}

func newTracker(cfg BulkheadConfig) *tracker {
	return &tracker{cfg: cfg, partners: map[string]*outcomeWindow{}}
}

// record counts one settled message of partner and reports whether the
// partner is now over the limit, with its counts in the window.
func (t *tracker) record(partner string, failed bool, now time.Time) (over bool, failures, total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.partners[partner]
	if w == nil {
		w = &outcomeWindow{}
		t.partners[partner] = w
	}
	slice := t.cfg.Window / bulkheadSlices
	start := now.Truncate(slice).UnixNano()
	i := int((now.UnixNano() / int64(slice)) % bulkheadSlices)
	if w.start[i] != start {
		w.start[i], w.ok[i], w.fail[i] = start, 0, 0
	}
	if failed {
		w.fail[i]++
	} else {
		w.ok[i]++
	}
	oldest := now.Add(-t.cfg.Window).UnixNano()
	for j := range bulkheadSlices {
		if w.start[j] > oldest {
			failures += w.fail[j]
			total += w.ok[j] + w.fail[j]
		}
	}
	return t.overLimit(failures, total), failures, total
}

// overLimit is the bulkhead's rule.
func (t *tracker) overLimit(failures, total int) bool {
	if total < t.cfg.MinMessages || failures == 0 {
		return false
	}
	if t.cfg.MaxFailures > 0 && failures >= t.cfg.MaxFailures {
		return true
	}
	return t.cfg.Ratio > 0 && float64(failures) >= t.cfg.Ratio*float64(total)
}

// reset forgets a partner's outcomes (it was resumed: it starts afresh).
func (t *tracker) reset(partner string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.partners, partner)
}

// prune forgets the partners with nothing in the window, so that the map
// holds only partners active lately.
func (t *tracker) prune(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	oldest := now.Add(-t.cfg.Window).UnixNano()
	for p, w := range t.partners {
		live := false
		for j := range bulkheadSlices {
			live = live || w.start[j] > oldest
		}
		if !live {
			delete(t.partners, p)
		}
	}
}

package alert

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/wire"
)

// Config configures the alerter (the hub.alerts section).
type Config struct {
	// Interval is the rate limit per (alert, partner): at most one alert in
	// each interval, then one digest that counts the suppressed ones.
	Interval time.Duration `yaml:"interval"`
	// Sinks lists where alerts go: log, nats, webhook.
	Sinks []string `yaml:"sinks"`
	// SubjectPrefix is the NATS sink's prefix: <prefix>.<alert name>.
	SubjectPrefix string `yaml:"subject_prefix"`
	// WebhookURL is an Alertmanager base URL; alerts are POSTed to
	// <url>/api/v2/alerts.
	WebhookURL string `yaml:"webhook_url"`
	// WebhookTimeout bounds one POST.
	WebhookTimeout time.Duration `yaml:"webhook_timeout"`
}

// SetDefaults fills every unset field.
func (c *Config) SetDefaults() {
	if c.Interval == 0 {
		c.Interval = time.Minute
	}
	if c.Sinks == nil {
		c.Sinks = []string{"log", "nats"}
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = wire.AlertSubjectPrefix
	}
	if c.WebhookTimeout == 0 {
		c.WebhookTimeout = 5 * time.Second
	}
}

// Validate reports every setting that cannot work.
func (c *Config) Validate() []error {
	var errs []error
	for _, s := range c.Sinks {
		switch s {
		case "log", "nats":
		case "webhook":
			if c.WebhookURL == "" {
				errs = append(errs, fmt.Errorf("alerts.sinks has webhook but alerts.webhook_url is empty"))
			}
		default:
			errs = append(errs, fmt.Errorf("alerts.sinks: unknown sink %q (log, nats, webhook)", s))
		}
	}
	return errs
}

// Alert is one notification.
type Alert struct {
	Name       string            `json:"name"`
	Severity   string            `json:"severity"`
	Partner    string            `json:"partner,omitempty"`
	Summary    string            `json:"summary"`
	Labels     map[string]string `json:"labels,omitempty"`
	At         time.Time         `json:"at"`
	Suppressed int               `json:"suppressed,omitempty"` // >0: a digest
}

// Sink delivers alerts somewhere.
type Sink interface {
	Send(ctx context.Context, a Alert) error
	Name() string
}

// alertKey is what the rate limit is per: the alert, the partner and, for
// alerts about one subject (a growing DLQ), the subject.
type alertKey struct{ name, partner, subject string }

type alertState struct {
	lastSent   time.Time
	suppressed int
	lastAlert  Alert
}

// Alerter rate-limits and deduplicates alerts per (alert, partner) and fans
// them out to its sinks. It is safe for concurrent use.
type Alerter struct {
	interval time.Duration
	sinks    []Sink
	log      zerolog.Logger
	now      func() time.Time
	// OnSent, if set before the first Fire, is told every delivery (the
	// hub counts them in a metric).
	OnSent func(a Alert, sink string, err error)
	// Limiter, if set before the first Fire, shares the rate limit with
	// other instances (KVLimiter): an alert another instance sent within
	// the interval is counted here as suppressed instead of sent again.
	Limiter Limiter

	mu    sync.Mutex
	state map[alertKey]*alertState
}

// New returns an alerter; now may be nil (time.Now).
func New(interval time.Duration, sinks []Sink, log zerolog.Logger, now func() time.Time) *Alerter {
	if now == nil {
		now = time.Now
	}
	return &Alerter{interval: interval, sinks: sinks, log: log, now: now, state: map[alertKey]*alertState{}}
}

// Fire sends a now, or counts it for the next digest when an alert of the
// same name and partner went out less than an interval ago.
func (a *Alerter) Fire(ctx context.Context, al Alert) {
	now := a.now()
	if al.At.IsZero() {
		al.At = now
	}
	k := alertKey{al.Name, al.Partner, al.Labels["subject"]}
	a.mu.Lock()
	st := a.state[k]
	if st == nil {
		st = &alertState{}
		a.state[k] = st
	}
	if !st.lastSent.IsZero() && now.Sub(st.lastSent) < a.interval {
		st.suppressed++
		st.lastAlert = al
		a.mu.Unlock()
		return
	}
	st.lastSent = now
	a.mu.Unlock()
	if !a.claim(ctx, k, "") {
		a.mu.Lock()
		st.suppressed++
		st.lastAlert = al
		a.mu.Unlock()
		return
	}
	a.send(ctx, al)
}

// claim asks the shared limiter, if any, whether this instance sends the
// alert of k now. A limiter that cannot be reached lets the alert go: a
// page sent twice is better than none.
func (a *Alerter) claim(ctx context.Context, k alertKey, kind string) bool {
	if a.Limiter == nil {
		return true
	}
	ok, err := a.Limiter.Claim(ctx, kind+"\x00"+k.name+"\x00"+k.partner+"\x00"+k.subject)
	if err != nil {
		a.log.Warn().Err(err).Str("alert", k.name).Msg("shared alert limit unreadable; sending anyway")
		return true
	}
	return ok
}

// Flush sends a digest for every (alert, partner) whose interval has passed
// with suppressed alerts. Run calls it periodically.
func (a *Alerter) Flush(ctx context.Context) {
	now := a.now()
	var digests []Alert
	a.mu.Lock()
	for k, st := range a.state {
		if st.suppressed > 0 && now.Sub(st.lastSent) >= a.interval {
			d := st.lastAlert
			d.Suppressed = st.suppressed
			d.At = now
			d.Summary = fmt.Sprintf("%d more %s alerts for partner %q were suppressed in the last %v; latest: %s",
				st.suppressed, k.name, k.partner, now.Sub(st.lastSent).Round(time.Second), st.lastAlert.Summary)
			digests = append(digests, d)
			st.suppressed = 0
			st.lastSent = now
		} else if st.suppressed == 0 && now.Sub(st.lastSent) > 10*a.interval {
			delete(a.state, k) // quiet for long: forget, keep the map small
		}
	}
	a.mu.Unlock()
	for _, d := range digests {
		if a.claim(ctx, alertKey{d.Name, d.Partner, d.Labels["subject"]}, "digest") {
			a.send(ctx, d)
		}
	}
}

// Run flushes digests until ctx is done, then once more.
func (a *Alerter) Run(ctx context.Context) {
	t := time.NewTicker(a.interval / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			a.Flush(context.Background())
			return
		case <-t.C:
			a.Flush(ctx)
		}
	}
}

func (a *Alerter) send(ctx context.Context, al Alert) {
	for _, s := range a.sinks {
		err := s.Send(ctx, al)
		if err != nil {
			a.log.Error().Err(err).Str("sink", s.Name()).Str("alert", al.Name).Msg("alert not delivered")
		}
		if a.OnSent != nil {
			a.OnSent(al, s.Name(), err)
		}
	}
}

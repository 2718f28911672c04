package alert

import (
	"slices"
	"sync"
)

// Recent keeps the last alerts sent, once each however many sinks it
// went to (Alerter.OnSent is called per sink), for a status page. The zero
// value keeps none; it is safe for concurrent use.
type Recent struct {
	// Max is how many alerts it keeps (the oldest go first).
	Max int

	mu     sync.Mutex
	alerts []Alert
}

// Sent records an alert once: the same alert again (name, time and
// summary), as the next sink reports it, is not kept twice.
func (r *Recent) Sent(a Alert) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.alerts); n > 0 {
		last := r.alerts[n-1]
		if last.Name == a.Name && last.At.Equal(a.At) && last.Summary == a.Summary {
			return
		}
	}
	r.alerts = append(r.alerts, a)
	if len(r.alerts) > r.Max {
		r.alerts = slices.Delete(r.alerts, 0, len(r.alerts)-r.Max)
	}
}

// List is the alerts kept, newest first; never nil.
func (r *Recent) List() []Alert {
	r.mu.Lock()
	out := slices.Clone(r.alerts)
	r.mu.Unlock()
	if out == nil {
		out = []Alert{}
	}
	slices.Reverse(out)
	return out
}

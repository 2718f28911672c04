package hub

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/edihub/edihub/hub/alert"
)

// Status is what the running hub knows beyond its streams, for the web
// console: which leak-probe conditions fire now and the alerts it sent
// last (newest first).
type Status struct {
	LeakProbe LeakProbeStatus `json:"leak_probe"`
	Alerts    []alert.Alert   `json:"recent_alerts"`
}

// LeakProbeStatus is the probe's state at its last sample.
type LeakProbeStatus struct {
	LastSample time.Time `json:"last_sample,omitzero"`
	// Firing names the conditions that fire: "growth:<DLQ subject>" or
	// "ratio"; empty when all is quiet.
	Firing []string `json:"firing"`
}

// recentAlerts is how many sent alerts Status keeps.
const recentAlerts = 20

type statusBoard struct {
	mu     sync.Mutex
	leak   LeakProbeStatus
	alerts []alert.Alert
}

func (b *statusBoard) setLeak(at time.Time, firing map[string]bool) {
	names := slices.Sorted(maps.Keys(firing))
	b.mu.Lock()
	b.leak = LeakProbeStatus{LastSample: at, Firing: names}
	b.mu.Unlock()
}

// alertSent records an alert once, however many sinks it went to.
func (b *statusBoard) alertSent(a alert.Alert) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := len(b.alerts); n > 0 {
		last := b.alerts[n-1]
		if last.Name == a.Name && last.At.Equal(a.At) && last.Summary == a.Summary {
			return
		}
	}
	b.alerts = append(b.alerts, a)
	if len(b.alerts) > recentAlerts {
		b.alerts = slices.Delete(b.alerts, 0, len(b.alerts)-recentAlerts)
	}
}

// Status returns the leak probe's state and the recent alerts.
func (h *Hub) Status() Status {
	b := &h.board
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Status{LeakProbe: b.leak, Alerts: slices.Clone(b.alerts)}
	if s.LeakProbe.Firing == nil {
		s.LeakProbe.Firing = []string{}
	}
	if s.Alerts == nil {
		s.Alerts = []alert.Alert{}
	}
	slices.Reverse(s.Alerts)
	return s
}

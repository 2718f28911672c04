package hub

import (
	"sync"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/hub/leakprobe"
)

// Status is what the running hub knows beyond its streams, for the web
// console: which leak-probe conditions fire now and the alerts it sent
// last (newest first).
type Status struct {
	LeakProbe leakprobe.Status `json:"leak_probe"`
	Alerts    []alert.Alert    `json:"recent_alerts"`
}

// recentAlerts is how many sent alerts Status keeps.
const recentAlerts = 20

// statusBoard is where the leak probe's loop and the alerter leave what
// Status reports.
type statusBoard struct {
	mu     sync.Mutex
	leak   leakprobe.Status
	alerts alert.Recent
}

func (b *statusBoard) setLeak(s leakprobe.Status) {
	b.mu.Lock()
	b.leak = s
	b.mu.Unlock()
}

// Status returns the leak probe's state and the recent alerts.
func (h *Hub) Status() Status {
	b := &h.board
	b.mu.Lock()
	s := Status{LeakProbe: b.leak}
	b.mu.Unlock()
	s.LeakProbe.Firing = append([]string{}, s.LeakProbe.Firing...)
	s.Alerts = b.alerts.List()
	return s
}

package metrics

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

// Board is where the leak probe's loop and the alerter leave what Status
// reports.
type Board struct {
	mu     sync.Mutex
	leak   leakprobe.Status
	Alerts alert.Recent // the alerter's Sent; set Max before use
}

// SetLeak keeps the leak probe's latest state.
func (b *Board) SetLeak(s leakprobe.Status) {
	b.mu.Lock()
	b.leak = s
	b.mu.Unlock()
}

// Status returns the leak probe's state (empty lists, never null) and the
// recent alerts.
func (b *Board) Status() Status {
	b.mu.Lock()
	s := Status{LeakProbe: b.leak}
	b.mu.Unlock()
	s.LeakProbe.Firing = append([]string{}, s.LeakProbe.Firing...)
	s.Alerts = b.Alerts.List()
	return s
}

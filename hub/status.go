package hub

import "github.com/edihub/edihub/hub/metrics"

// Status is what the running hub knows beyond its streams, for the web
// console (metrics.Status: the leak probe's firing conditions, the
// alerts sent last).
type Status = metrics.Status

// recentAlerts is how many sent alerts Status keeps.
const recentAlerts = 20

// Status returns the leak probe's state and the recent alerts.
func (h *Hub) Status() Status { return h.board.Status() }

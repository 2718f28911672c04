package hub

import (
	"fmt"
	"testing"
	"time"

	"github.com/edihub/edihub/alert"
	"github.com/edihub/edihub/hub/leakprobe"
)

func TestStatusBoard(t *testing.T) {
	h := &Hub{}
	h.board.Alerts.Max = recentAlerts
	if s := h.Status(); len(s.LeakProbe.Firing) != 0 || len(s.Alerts) != 0 || s.LeakProbe.Firing == nil || s.Alerts == nil {
		t.Fatalf("empty status %+v: want empty lists, not null", s)
	}
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	h.board.SetLeak(leakprobe.Status{LastSample: at, Firing: []string{"growth:edi.parse.dlq.schema", "ratio"}})
	a := alert.Alert{Name: "DeadLetterQueueGrowing", Summary: "grew", At: at}
	h.board.Alerts.Sent(a)
	h.board.Alerts.Sent(a) // the same alert through a second sink
	for i := range recentAlerts + 5 {
		h.board.Alerts.Sent(alert.Alert{Name: "PoisonMessageDetected", Summary: fmt.Sprint(i), At: at.Add(time.Duration(i+1) * time.Second)})
	}
	s := h.Status()
	if got := s.LeakProbe.Firing; len(got) != 2 || got[0] != "growth:edi.parse.dlq.schema" || got[1] != "ratio" || !s.LeakProbe.LastSample.Equal(at) {
		t.Fatalf("leak probe %+v", s.LeakProbe)
	}
	if len(s.Alerts) != recentAlerts || s.Alerts[0].Summary != fmt.Sprint(recentAlerts+4) || s.Alerts[recentAlerts-1].Summary != "5" {
		t.Fatalf("alerts: %d, newest %q, oldest %q", len(s.Alerts), s.Alerts[0].Summary, s.Alerts[len(s.Alerts)-1].Summary)
	}
	h.board.SetLeak(leakprobe.Status{LastSample: at.Add(time.Minute)})
	if s := h.Status(); s.LeakProbe.Firing == nil || len(s.LeakProbe.Firing) != 0 {
		t.Fatalf("cleared probe: firing %#v, want an empty list", s.LeakProbe.Firing)
	}
}

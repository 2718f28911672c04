package alert

import (
	"fmt"
	"testing"
	"time"
)

// Recent keeps an alert once however many sinks reported it, at most Max
// of them, newest first; an empty list is empty, not nil.
func TestRecent(t *testing.T) {
	r := Recent{Max: 20}
	if l := r.List(); l == nil || len(l) != 0 {
		t.Fatalf("empty: %#v, want an empty list", l)
	}
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	a := Alert{Name: "DeadLetterQueueGrowing", Summary: "grew", At: at}
	r.Sent(a)
	r.Sent(a) // the same alert through a second sink
	if l := r.List(); len(l) != 1 {
		t.Fatalf("one alert through two sinks kept %d times", len(l))
	}
	for i := range r.Max + 5 {
		r.Sent(Alert{Name: "PoisonMessageDetected", Summary: fmt.Sprint(i), At: at.Add(time.Duration(i+1) * time.Second)})
	}
	l := r.List()
	if len(l) != r.Max || l[0].Summary != fmt.Sprint(r.Max+4) || l[r.Max-1].Summary != "5" {
		t.Fatalf("alerts: %d, newest %q, oldest %q", len(l), l[0].Summary, l[len(l)-1].Summary)
	}
}

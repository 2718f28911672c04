package audit

import (
	"sync"
	"time"
)

// Sampler lets one event per key through per interval and counts the
// rest, for events that would otherwise flood the trail (duplicates).
type Sampler struct {
	Every time.Duration
	mu    sync.Mutex
	last  map[string]time.Time
	held  map[string]int
}

// Sample reports whether an event for key is due now, and how many were
// held back since the last one.
func (s *Sampler) Sample(key string, now time.Time) (held int, due bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last, s.held = map[string]time.Time{}, map[string]int{}
	}
	if t, ok := s.last[key]; ok && now.Sub(t) < s.Every {
		s.held[key]++
		return 0, false
	}
	held = s.held[key]
	s.last[key], s.held[key] = now, 0
	if len(s.last) > 10000 { // bounded: forget keys quiet for long
		for k, t := range s.last {
			if now.Sub(t) > 10*s.Every {
				delete(s.last, k)
				delete(s.held, k)
			}
		}
	}
	return held, true
}

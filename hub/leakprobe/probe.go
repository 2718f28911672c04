package leakprobe

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/edihub/edihub/alert"
)

// Probe watches dead-letter subjects for growth and the dead-letter
// ratio. It alerts once when a condition starts and again only after it
// has cleared, so a burst does not page twice. It is not safe for
// concurrent use: one loop samples and observes.
type Probe struct {
	cfg     Config
	samples []Sample
	firing  map[string]bool
}

// Sample is one look at the dead-letter queues.
type Sample struct {
	At        time.Time
	Depth     map[string]uint64 // DLQ subject → messages
	Dead      int64             // dead letters so far (all subjects)
	Processed int64             // messages that left a partition so far
}

// Status is the probe's state at its last sample.
type Status struct {
	LastSample time.Time `json:"last_sample,omitzero"`
	// Firing names the conditions that fire: "growth:<DLQ subject>" or
	// "ratio"; empty when all is quiet.
	Firing []string `json:"firing"`
}

// New is a probe with no samples yet; cfg must have its defaults set.
func New(cfg Config) *Probe {
	return &Probe{cfg: cfg, firing: map[string]bool{}}
}

// Observe adds a sample and returns the alerts that start firing now.
func (p *Probe) Observe(s Sample) []alert.Alert {
	p.samples = append(p.samples, s)
	keep := p.cfg.GrowthWindow
	if p.cfg.RatioWindow > keep {
		keep = p.cfg.RatioWindow
	}
	for len(p.samples) > 1 && s.At.Sub(p.samples[0].At) > keep {
		p.samples = p.samples[1:]
	}
	var out []alert.Alert
	growthBase := p.oldestWithin(s.At, p.cfg.GrowthWindow)
	for subj, n := range s.Depth {
		before := growthBase.Depth[subj] // 0 when the subject is new
		grew := int64(n) - int64(before)
		key := "growth:" + subj
		if grew > int64(p.cfg.GrowthThreshold) {
			if !p.firing[key] {
				p.firing[key] = true
				stage, cause := dlqParts(subj)
				out = append(out, alert.Alert{
					Name: "DeadLetterQueueGrowing", Severity: "warning",
					Summary: fmt.Sprintf("%s grew by %d messages in %v (threshold %d)", subj, grew, s.At.Sub(growthBase.At).Round(time.Second), p.cfg.GrowthThreshold),
					Labels:  map[string]string{"subject": subj, "stage": stage, "cause": cause},
				})
			}
		} else {
			delete(p.firing, key)
		}
	}
	ratioBase := p.oldestWithin(s.At, p.cfg.RatioWindow)
	dead, processed := s.Dead-ratioBase.Dead, s.Processed-ratioBase.Processed
	if processed >= int64(p.cfg.RatioMinProcessed) && processed > 0 && float64(dead)/float64(processed) > p.cfg.RatioThreshold {
		if !p.firing["ratio"] {
			p.firing["ratio"] = true
			out = append(out, alert.Alert{
				Name: "DeadLetterRatioHigh", Severity: "warning",
				Summary: fmt.Sprintf("%d dead letters for %d processed messages (%.3f%%) in the last %v; threshold %.3f%%",
					dead, processed, 100*float64(dead)/float64(processed), s.At.Sub(ratioBase.At).Round(time.Second), 100*p.cfg.RatioThreshold),
			})
		}
	} else {
		delete(p.firing, "ratio")
	}
	return out
}

// Status is the time of the last sample and the conditions that fire
// since it, in name order (nil when none does).
func (p *Probe) Status() Status {
	var at time.Time
	if n := len(p.samples); n > 0 {
		at = p.samples[n-1].At
	}
	return Status{LastSample: at, Firing: slices.Sorted(maps.Keys(p.firing))}
}

func (p *Probe) oldestWithin(now time.Time, window time.Duration) Sample {
	for _, s := range p.samples {
		if now.Sub(s.At) <= window {
			return s
		}
	}
	return p.samples[len(p.samples)-1]
}

// dlqParts splits edi.<stage>.dlq.<cause>.
func dlqParts(subject string) (stage, cause string) {
	parts := strings.Split(subject, ".")
	if len(parts) == 4 {
		return parts[1], parts[3]
	}
	return "", ""
}

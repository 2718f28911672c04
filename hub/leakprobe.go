package hub

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/edihub/edihub/hub/alert"
	js "github.com/nats-io/nats.go/jetstream"
)

// leakProbe watches dead-letter subjects for growth and the dead-letter
// ratio. It alerts once when a condition starts and again only after it
// has cleared, so a burst does not page twice.
type leakProbe struct {
	cfg     LeakProbeConfig
	samples []leakSample
	firing  map[string]bool
}

type leakSample struct {
	at        time.Time
	depth     map[string]uint64 // DLQ subject → messages
	dead      int64             // dead letters so far (all subjects)
	processed int64             // messages that left a partition so far
}

func newLeakProbe(cfg LeakProbeConfig) *leakProbe {
	return &leakProbe{cfg: cfg, firing: map[string]bool{}}
}

// observe adds a sample and returns the alerts that start firing now.
func (p *leakProbe) observe(s leakSample) []alert.Alert {
	p.samples = append(p.samples, s)
	keep := p.cfg.GrowthWindow
	if p.cfg.RatioWindow > keep {
		keep = p.cfg.RatioWindow
	}
	for len(p.samples) > 1 && s.at.Sub(p.samples[0].at) > keep {
		p.samples = p.samples[1:]
	}
	var out []alert.Alert
	growthBase := p.oldestWithin(s.at, p.cfg.GrowthWindow)
	for subj, n := range s.depth {
		before := growthBase.depth[subj] // 0 when the subject is new
		grew := int64(n) - int64(before)
		key := "growth:" + subj
		if grew > int64(p.cfg.GrowthThreshold) {
			if !p.firing[key] {
				p.firing[key] = true
				stage, cause := dlqParts(subj)
				out = append(out, alert.Alert{
					Name: "DeadLetterQueueGrowing", Severity: "warning",
					Summary: fmt.Sprintf("%s grew by %d messages in %v (threshold %d)", subj, grew, s.at.Sub(growthBase.at).Round(time.Second), p.cfg.GrowthThreshold),
					Labels:  map[string]string{"subject": subj, "stage": stage, "cause": cause},
				})
			}
		} else {
			delete(p.firing, key)
		}
	}
	ratioBase := p.oldestWithin(s.at, p.cfg.RatioWindow)
	dead, processed := s.dead-ratioBase.dead, s.processed-ratioBase.processed
	if processed >= int64(p.cfg.RatioMinProcessed) && processed > 0 && float64(dead)/float64(processed) > p.cfg.RatioThreshold {
		if !p.firing["ratio"] {
			p.firing["ratio"] = true
			out = append(out, alert.Alert{
				Name: "DeadLetterRatioHigh", Severity: "warning",
				Summary: fmt.Sprintf("%d dead letters for %d processed messages (%.3f%%) in the last %v; threshold %.3f%%",
					dead, processed, 100*float64(dead)/float64(processed), s.at.Sub(ratioBase.at).Round(time.Second), 100*p.cfg.RatioThreshold),
			})
		}
	} else {
		delete(p.firing, "ratio")
	}
	return out
}

func (p *leakProbe) oldestWithin(now time.Time, window time.Duration) leakSample {
	for _, s := range p.samples {
		if now.Sub(s.at) <= window {
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

// dlqDepth reads the message count of each DLQ subject from the server.
func (h *Hub) dlqDepth(ctx context.Context) (map[string]uint64, error) {
	s, err := h.js.Stream(ctx, h.cfg.Streams.DLQ)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx, js.WithSubjectFilter(">"))
	if err != nil {
		return nil, err
	}
	return info.State.Subjects, nil
}

// runLeakProbe samples every interval and alerts through the alerter. On
// a cluster it runs on the instance that holds its lease, and fence says,
// before each alert, whether it still does (else the new holder alerts).
func (h *Hub) runLeakProbe(ctx context.Context, fence func(context.Context) error) error {
	p := newLeakProbe(h.cfg.LeakProbe)
	t := time.NewTicker(h.cfg.LeakProbe.Interval)
	defer t.Stop()
	for {
		depth, err := h.dlqDepth(ctx)
		if err != nil {
			h.log.Warn().Err(err).Msg("leak probe: cannot read the DLQ stream")
		} else {
			h.met.setDLQDepth(h.stageNames(), depth)
			now := time.Now()
			for _, a := range p.observe(leakSample{at: now, depth: depth, dead: h.deadLettered.Load(), processed: h.processed.Load()}) {
				if err := fence(ctx); err != nil {
					return fmt.Errorf("leak probe: %w", err)
				}
				h.alerter.Fire(ctx, a)
			}
			h.board.setLeak(now, p.firing)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

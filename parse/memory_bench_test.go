package parse

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/partner"
)

// tinySegments is a valid INVOIC of about size bytes made of 6-byte
// segments (LIN+1'): the worst legal input for the JSON view, which
// renders each as about 30 bytes.
func tinySegments(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 200)
	b.WriteString("UNB+UNOA:3+SENDER:14+RECEIVER:14+240315:0930+REF1++INVOIC'UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'")
	n := 0
	for b.Len() < size-60 {
		b.WriteString("LIN+1'")
		n++
	}
	fmt.Fprintf(&b, "UNT+%d+1'UNZ+1+REF1'", n+3)
	return b.Bytes()
}

// peakSampler samples the heap's live objects every millisecond (a
// runtime/metrics read, no stop-the-world) and keeps the highest value.
type peakSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func startPeakSampler() *peakSampler {
	p := &peakSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(p.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > p.peak.Load() {
				p.peak.Store(v)
			}
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peakSampler) Stop() uint64 { close(p.stop); <-p.done; return p.peak.Load() }

// resetPeakRSS resets the kernel's high-water mark of the process's
// resident set (VmHWM), so that peakRSS reports this benchmark's alone.
func resetPeakRSS() bool { return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil }

func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkStageMemory: the parse stage (walk, JSON view, outputs queued
// until the worker publishes them) over interchanges of tiny segments,
// with the peak of live heap and the process's peak RSS per run, and each
// against the input's size (x-input). Run one size at a time for RSS
// (-bench '^BenchmarkStageMemory$/9.9MB$' -benchtime 3x): the high-water
// mark is reset before each, but the heap the runtime keeps from an
// earlier one counts. Peak heap counts garbage not yet swept: at GOGC=400
// the views of the earlier rounds (the outputs a worker would have
// published) stay until the collector's target, five times the live heap.
func BenchmarkStageMemory(b *testing.B) {
	benchStageMemory(b, Stage(Config{}, nil))
}

// BenchmarkStageMemoryAgreements is BenchmarkStageMemory with partner
// agreements: a profile with the built-in rules, which read the segments
// of a large message again from the input (EachSegment) instead of keeping
// them. The directory validation (which reads them the same way) is off:
// it refuses these interchanges (1.7 million LIN where D96A allows 200 000).
func BenchmarkStageMemoryAgreements(b *testing.B) {
	reg, err := partner.New(partner.Config{Directory: "off", Profiles: []partner.Profile{{ID: "ACME", Messages: []string{"INVOIC"}}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	benchStageMemory(b, New(Config{}, &Options{Agreements: reg}))
}

func benchStageMemory(b *testing.B, st hub.Stage) {
	for _, c := range []struct {
		name string
		size int
	}{{"1MB", 1 << 20}, {"5MB", 5 << 20}, {"9.9MB", 99 << 20 / 10}} {
		data := tinySegments(c.size)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			runtime.GC()
			rssOK := resetPeakRSS()
			base := peakRSS()
			p := startPeakSampler()
			var views int
			for i := 0; b.Loop(); i++ {
				m := &hub.Message{Partner: "ACME", Stream: "INGEST", Seq: uint64(i + 1), Header: nats.Header{}, Data: data}
				if err := st.Handle(context.Background(), m); err != nil {
					b.Fatal(err)
				}
				views = 0
				for _, o := range m.Outputs() {
					views += len(o.Data)
				}
			}
			heap := p.Stop()
			b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(heap)/float64(len(data)), "peak-heap-x-input")
			b.ReportMetric(float64(views)/float64(len(data)), "view-x-input")
			if rssOK {
				rss := peakRSS()
				b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
				b.ReportMetric(float64(rss-min(base, rss))/float64(len(data)), "RSS-growth-x-input")
			}
		})
	}
}

// BenchmarkStageMemoryPartitions: four partitions each parse a 9.9 MiB
// interchange of tiny segments at once, through one stage (one budget):
// under the default budget (DefaultMemoryBudget of this machine) and with
// no budget (the plain alternative: everything admitted). Peak heap and
// RSS as in BenchmarkStageMemory; waits and wait seconds from the budget.
// Run one sub-benchmark per process (-bench 'StageMemoryPartitions/default').
func BenchmarkStageMemoryPartitions(b *testing.B) {
	data := tinySegments(99 << 20 / 10)
	for _, c := range []struct {
		name     string
		budget   func() *Budget
		memLimit int64 // a Go memory limit set for the run (runtime.memory_limit)
	}{
		{"default", func() *Budget { return NewBudget(0) }, 0},
		{"none", func() *Budget { return NewBudget(1 << 62) }, 0},
		// the default of a 6 GiB machine or cgroup: 1.5 GiB, one at a time
		{"6GiB-machine", func() *Budget { return NewBudget(6 << 30 / 4) }, 0},
		// runtime.memory_limit 2GiB: the default budget is 1.5 GiB of
		// live heap, three at a time
		{"memory-limit-2GiB", func() *Budget { return NewBudget(0) }, 2 << 30},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.memLimit > 0 {
				old := debug.SetMemoryLimit(c.memLimit)
				defer debug.SetMemoryLimit(old)
			}
			budget := c.budget()
			st := New(Config{}, &Options{Budget: budget})
			b.ReportAllocs()
			b.SetBytes(4 * int64(len(data)))
			runtime.GC()
			rssOK := resetPeakRSS()
			p := startPeakSampler()
			for i := 0; b.Loop(); i++ {
				errs := make(chan error, 4)
				for k := range 4 {
					go func() {
						m := &hub.Message{Partner: "ACME" + strconv.Itoa(k), Partition: k, Stream: "INGEST", Seq: uint64(4*i + k + 1), Header: nats.Header{}, Data: data}
						errs <- st.Handle(context.Background(), m)
					}()
				}
				for range 4 {
					if err := <-errs; err != nil {
						b.Fatal(err)
					}
				}
			}
			heap := p.Stop()
			b.ReportMetric(float64(budget.Limit())/(1<<20), "budget-MiB")
			// a stage without agreements renders the large messages while read
			b.ReportMetric(float64(EstimateStreamed(len(data)))/(1<<20), "estimate-MiB")
			b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(budget.waits.Load())/float64(b.N), "waits/op")
			b.ReportMetric(time.Duration(budget.waitNanos.Load()).Seconds()/float64(b.N), "wait-s/op")
			if rssOK {
				b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
			}
		})
	}
}

package parse

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/hub"
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
// (-bench 'StageMemory/9.9MB' -benchtime 3x): the high-water mark is
// reset before each, but the heap the runtime keeps from an earlier one
// counts.
func BenchmarkStageMemory(b *testing.B) {
	st := Stage(Config{}, nil)
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

package parse

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/hub"
)

// Budget admits interchanges into the parse stage by the memory their
// parse is estimated to take at its peak (Estimate: a factor times the
// input's size), so that the partitions together stay within a limit:
// a partition whose interchange does not fit waits until others release
// theirs, instead of the process growing until it is killed. Waiters are
// served in order (a large interchange is not overtaken for ever by small
// ones), and one estimated at more than the whole budget is admitted
// alone, when nothing else is in (it never starves). Inputs under
// budgetFrom are not counted: the common small interchange takes no lock.
// One Budget is shared by every partition (the stage New builds).
type Budget struct {
	limit  int64
	source string // where the limit came from, for the log

	mu      sync.Mutex
	inUse   int64
	waiters []*budgetWaiter // in arrival order

	used      atomic.Int64 // inUse, for the gauge without the lock
	waits     atomic.Uint64
	waitNanos atomic.Int64
}

type budgetWaiter struct {
	need  int64
	ready chan struct{} // closed when admitted
}

// budgetFrom is the input size from which an interchange is counted: the
// parse of one under it (a few MB at most) is noise next to any budget.
const budgetFrom = 64 << 10

// LiveBytesPerInputByte is the parse stage's live heap at its peak per
// byte of input for the worst legal input (an INVOIC of 6-byte segments:
// every segment, element and value kept until the message ends, and its
// JSON view of 5.5 times the input): 44 measured at 9.9 MB, 56 at 1 MB
// (BenchmarkStageMemory under a low GOMEMLIMIT, BENCHMARKS.md).
const LiveBytesPerInputByte = 48

// StreamedLiveBytesPerInputByte is LiveBytesPerInputByte for an
// interchange whose large messages are rendered while read, their segments
// not kept (edifact.WalkViews: agreements that read no segment): the input,
// the views and the walk's buffers. The view is what grows with the
// segments' count: 5.5 times the input for 6-byte segments (LIN+1', 7.6
// measured for one parse at 9.9 MB), 7 for EDIFACT's shortest (LIN', 10.9)
// and 9 for X12's (N1~, 12.9), the worst legal input (BENCHMARKS.md).
const StreamedLiveBytesPerInputByte = 13

// NewBudget is a budget of limit bytes; limit ≤ 0 takes DefaultMemoryBudget.
func NewBudget(limit int64) *Budget {
	src := "parse.memory_budget"
	if limit <= 0 {
		limit, src = DefaultMemoryBudget()
	}
	return &Budget{limit: limit, source: src}
}

// Source says where the limit came from (the setting, or the default's
// reason).
func (b *Budget) Source() string { return b.source }

// Limit is the budget in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// InUse is what the interchanges being parsed are estimated to take.
func (b *Budget) InUse() int64 { return b.used.Load() }

// Estimate is the peak memory the parse of size bytes is estimated to
// take: the live heap (LiveBytesPerInputByte) and, without a Go memory
// limit, the garbage the collector lets grow on top of it (GOGC: at 400
// the heap reaches five times the live heap before a collection).
func Estimate(size int) int64 {
	return int64(size) * LiveBytesPerInputByte * gcFactor()
}

// EstimateStreamed is Estimate for an interchange whose large messages are
// rendered while read (StreamedLiveBytesPerInputByte).
func EstimateStreamed(size int) int64 {
	return int64(size) * StreamedLiveBytesPerInputByte * gcFactor()
}

// gcFactor is 1 under a Go memory limit (the collector keeps the heap
// under it while the live heap fits), else 1 + GOGC/100.
func gcFactor() int64 {
	s := []metrics.Sample{{Name: "/gc/gomemlimit:bytes"}, {Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() < math.MaxInt64 {
		return 1
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		return 1 + int64(s[1].Value.Uint64())/100
	}
	return 2
}

// Admit waits until the parse of size bytes fits the budget and returns
// the function that gives its room back (call it once, when the parse's
// memory is garbage: after the stage). It returns ctx's error if ctx ends
// first; nothing is taken then. An input under budgetFrom is admitted at
// once and counts nothing.
func (b *Budget) Admit(ctx context.Context, size int) (release func(), err error) {
	return b.AdmitEstimate(ctx, size, Estimate(size))
}

// AdmitEstimate is Admit for an interchange of size bytes estimated at
// estimate (EstimateStreamed).
func (b *Budget) AdmitEstimate(ctx context.Context, size int, estimate int64) (release func(), err error) {
	if size < budgetFrom {
		return noRelease, nil
	}
	need := min(estimate, b.limit) // more than the budget: alone
	b.mu.Lock()
	if len(b.waiters) == 0 && b.fits(need) {
		b.take(need)
		b.mu.Unlock()
		return b.releaser(need), nil
	}
	w := &budgetWaiter{need: need, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	start := time.Now()
	b.waits.Add(1)
	defer func() { b.waitNanos.Add(int64(time.Since(start))) }()
	select {
	case <-w.ready:
		return b.releaser(need), nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	select {
	case <-w.ready: // admitted meanwhile: give it back
		b.mu.Unlock()
		b.give(need)
	default:
		for i, o := range b.waiters {
			if o == w {
				b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
				break
			}
		}
		b.admitWaiting() // the next ones may fit now that w is gone
		b.mu.Unlock()
	}
	return nil, ctx.Err()
}

func noRelease() {}

// fits says whether need can be taken now (the lock held): within the
// limit, or alone.
func (b *Budget) fits(need int64) bool { return b.inUse == 0 || b.inUse+need <= b.limit }

func (b *Budget) take(need int64) { b.inUse += need; b.used.Store(b.inUse) }

func (b *Budget) releaser(need int64) func() {
	var once sync.Once
	return func() { once.Do(func() { b.give(need) }) }
}

// give returns need to the budget and admits the waiters that fit, in order.
func (b *Budget) give(need int64) {
	b.mu.Lock()
	b.inUse -= need
	b.used.Store(b.inUse)
	b.admitWaiting()
	b.mu.Unlock()
}

// admitWaiting admits waiters from the front while they fit (the lock held).
func (b *Budget) admitWaiting() {
	for len(b.waiters) > 0 && b.fits(b.waiters[0].need) {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.take(w.need)
		close(w.ready)
	}
}

// Collectors are the budget's metrics: edihub_parse_memory_budget_bytes,
// _in_use_bytes, _waits_total, _wait_seconds_total.
func (b *Budget) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edihub_parse_memory_budget_bytes",
			Help: "The parse stage's memory budget (parse.memory_budget): interchanges are admitted while their estimated peaks fit."},
			func() float64 { return float64(b.limit) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edihub_parse_memory_in_use_bytes",
			Help: "Estimated peak memory of the interchanges being parsed now."},
			func() float64 { return float64(b.used.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edihub_parse_memory_waits_total",
			Help: "Interchanges that waited for room in the parse memory budget."},
			func() float64 { return float64(b.waits.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edihub_parse_memory_wait_seconds_total",
			Help: "Time interchanges waited for room in the parse memory budget."},
			func() float64 { return time.Duration(b.waitNanos.Load()).Seconds() }),
	}
}

// DefaultMemoryBudget is the budget when parse.memory_budget is not set,
// and where it came from: three quarters of the Go memory limit
// (runtime.memory_limit, GOMEMLIMIT) when one is set, else a quarter of
// the memory the process may use (the cgroup's memory.max, else the
// machine's MemTotal), else 1 GiB.
func DefaultMemoryBudget() (int64, string) {
	s := []metrics.Sample{{Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() < math.MaxInt64 {
		return int64(s[0].Value.Uint64()) / 4 * 3, "3/4 of the Go memory limit"
	}
	if n, src := machineMemory(); n > 0 {
		return n / 4, "1/4 of " + src
	}
	return 1 << 30, "1 GiB (the machine's memory unknown)"
}

// machineMemory is the cgroup's memory limit, else the machine's memory.
func machineMemory() (int64, string) {
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n, "the cgroup's memory.max"
		}
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10, "the machine's memory"
			}
		}
	}
	return 0, ""
}

// String says the budget and what is in use, for errors and logs.
func (b *Budget) String() string {
	return fmt.Sprintf("%d MiB in use of a budget of %d MiB", b.used.Load()>>20, b.limit>>20)
}

// budgetLogAfter is the wait after which an admitted interchange's wait
// is logged: shorter ones are the metrics' (edihub_parse_memory_waits_total).
const budgetLogAfter = time.Second

// admitLogged is admit with the budget's own log lines, so that an
// operator tells a wait for memory from a service that did not answer
// (the hub logs both as a message that waits): "wait": "memory_budget",
// the interchange's size, its estimated peak and the budget's use.
func admitLogged(ctx context.Context, b *Budget, m *hub.Message, log zerolog.Logger, streamed bool) (func(), error) {
	start := time.Now()
	release, err := admit(ctx, b, len(m.Data), streamed)
	waited := time.Since(start)
	if ctx.Err() != nil || err == nil && waited < budgetLogAfter { // a stage deadline or a stop: the hub's to log
		return release, err
	}
	ev := log.Info()
	msg := "admitted to the parse stage after waiting for room in the memory budget"
	if err != nil {
		ev = log.Warn()
		msg = "no room in the parse memory budget: the interchange is delivered again (not charged to it; no service is down)"
	}
	ev.Str("wait", "memory_budget").Str("partner", m.Partner).Uint64("seq", m.Seq).Int("bytes", len(m.Data)).
		Int64("estimated_peak_bytes", estimateFor(len(m.Data), streamed)).Dur("waited", waited).
		Int64("budget_in_use_bytes", b.InUse()).Int64("budget_bytes", b.Limit()).Msg(msg)
	return release, err
}

// estimateFor is the peak admit counts for an input of size bytes: lower
// when its large messages' views are rendered while read (streamed).
func estimateFor(size int, streamed bool) int64 {
	if streamed {
		return EstimateStreamed(size)
	}
	return Estimate(size)
}

package jetstream

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// StoreWatch remembers the writes the store refused (StorageFault): the
// one place /readyz and the StorageUnavailable alert read. Every write
// path of the hub's streams and buckets reports to the process's
// StoreFaults (Publish, PublishAll, the attempt store). A full disk made
// the file store refuse INGEST, PARSED and ledger writes while /readyz's
// own small probe still went through (issue 25): the probe alone cannot
// see it.
type StoreWatch struct {
	refused  atomic.Uint64
	lastNano atomic.Int64
	mu       sync.Mutex
	lastErr  string
}

// StoreFaults is the process's watch.
var StoreFaults = &StoreWatch{}

// storeFaultHold is how long one refused write keeps the store
// unavailable: it clears by itself once writes stop being refused.
const storeFaultHold = 10 * time.Second

// Observe notes err when it is a storage fault and says whether it was.
func (w *StoreWatch) Observe(err error) bool {
	if !StorageFault(err) {
		return false
	}
	w.refused.Add(1)
	w.lastNano.Store(time.Now().UnixNano())
	w.mu.Lock()
	w.lastErr = err.Error()
	w.mu.Unlock()
	return true
}

// Unavailable says whether a write was refused within the hold, and the
// last refusal.
func (w *StoreWatch) Unavailable(now time.Time) (bool, string) {
	at := w.lastNano.Load()
	if at == 0 || now.Sub(time.Unix(0, at)) > storeFaultHold {
		return false, ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return true, w.lastErr
}

// Collectors are the watch's metrics, for the application's registry.
func (w *StoreWatch) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edihub_jetstream_store_refused_writes_total",
			Help: "Writes the JetStream store refused (disk full, store or account limit, store failed)."},
			func() float64 { return float64(w.refused.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edihub_jetstream_store_unavailable",
			Help: "1 while the JetStream store refuses writes (a refusal in the last 10 s), else 0."},
			func() float64 {
				if u, _ := w.Unavailable(time.Now()); u {
					return 1
				}
				return 0
			}),
	}
}

// diskLow is the free space under which the store's disk counts as full:
// a full disk makes the embedded server's file store stop answering
// publishes (the publisher sees only timeouts), so the hub watches the
// disk itself rather than wait for an error that never comes.
const diskLow = 8 << 20

// WatchDisk checks the free space of the disk under dir every interval
// until ctx ends, and reports a full disk as a refused write (serve runs
// it on the embedded server's store folder). When the disk has room again
// after being full it calls freed (serve: RestartJetStream), once per
// episode.
func (w *StoreWatch) WatchDisk(ctx context.Context, dir string, interval time.Duration, freed func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	full := false
	for {
		if free, err := diskFree(dir); err == nil {
			switch {
			case free < diskLow:
				full = true
				w.Observe(fmt.Errorf("store folder %s: no space left on device (%d bytes free)", dir, free))
			case full && free >= 2*diskLow:
				full = false
				if freed != nil {
					freed()
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func diskFree(dir string) (uint64, error) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return 0, err
	}
	return fs.Bavail * uint64(fs.Bsize), nil
}

package ledger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// writers is the hub's partition count: that many workers record at once.
const writers = 8

// runWriters shares b.N operations among the writers.
func runWriters(b *testing.B, op func(i int64) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	cpu := processCPU()
	b.ResetTimer()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := op(i); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	// CPU of the whole process, the embedded server included: on two
	// cores what bounds the rate.
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

func await(futures ...jetstream.PubAckFuture) error {
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return err
		case <-time.After(10 * time.Second):
			return errors.New("no ack")
		}
	}
	return nil
}

// BenchmarkRecord measures the KV ledger with 8 writers; the pipeline
// cases add one PARSED output per interchange, published with the ledger's
// entry and awaited once, beside the output alone (the plain alternative).
//
//	go test -run '^$' -bench 'Record/(kv|pipeline)/(Commit|output$|output\+)' -benchtime 20000x ./ledger/
func BenchmarkRecord(b *testing.B) {
	srv := jetstreamtest.StartServer(b, nil)
	_, js := jetstreamtest.Connect(b, srv.URL)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PARSED", Subjects: []string{"parsed.>"}}); err != nil {
		b.Fatal(err)
	}
	kv, err := OpenKV(ctx, js, nil)
	if err != nil {
		b.Fatal(err)
	}
	output := make([]byte, 1024)
	// a fresh prefix per run: Nats-Msg-Id would make a repeated key free
	key := func(i int64) Key {
		return Key{Partner: "bench", Sender: "S", Recipient: "R", ControlRef: fmt.Sprint(time.Now().UnixNano(), "-", i)}
	}
	publishOutput := func(i int64) (jetstream.PubAckFuture, error) {
		return js.PublishMsgAsync(&nats.Msg{Subject: fmt.Sprint("parsed.p", i%writers), Data: output})
	}

	b.Run("kv/Record", func(b *testing.B) {
		runWriters(b, func(i int64) error { return kv.Record(key(i)) })
	})
	perEntry := func(b *testing.B, n0, g0 int64) {
		if n, g := kv.CommitStats(); g > g0 {
			b.ReportMetric(float64(n-n0)/float64(g-g0), "interchanges/entry")
		}
	}
	b.Run("kv/Commit", func(b *testing.B) {
		b.ReportAllocs()
		n0, g0 := kv.CommitStats()
		runWriters(b, func(i int64) error { return kv.Commit([]Key{key(i)}, "")(ctx) })
		perEntry(b, n0, g0)
	})
	// the plain alternative: the output alone, no ledger
	b.Run("pipeline/output", func(b *testing.B) {
		b.ReportAllocs()
		runWriters(b, func(i int64) error {
			f, err := publishOutput(i)
			if err != nil {
				return err
			}
			return await(f)
		})
	})
	b.Run("pipeline/output+kv-commit", func(b *testing.B) {
		b.ReportAllocs()
		n0, g0 := kv.CommitStats()
		defer func() { perEntry(b, n0, g0) }()
		runWriters(b, func(i int64) error {
			out, err := publishOutput(i)
			if err != nil {
				return err
			}
			wait := kv.Commit([]Key{key(i)}, "")
			if err := await(out); err != nil {
				return err
			}
			return wait(ctx)
		})
	})
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIndexMemory reports the heap an index holds per interchange
// remembered (a million, with origins like the hub's):
//
//	go test -run '^$' -bench IndexMemory -benchtime 1x ./ledger/
func BenchmarkIndexMemory(b *testing.B) {
	const n = 1_000_000
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ix := newIndex(30*24*time.Hour, time.Now)
		at := time.Now().UnixNano()
		for i := range n {
			var d digest
			binary.BigEndian.PutUint64(d[:], uint64(i))
			ix.put(d, mark{at: at, origin: "INGEST:" + strconv.Itoa(1_000_000+i)})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-bytes/interchange")
		runtime.KeepAlive(ix)
	}
}

// BenchmarkRestartRead is the first lookup of a restarted store (what a
// hub's first interchange waits for after kill -9) against the ledger's
// size: reading the whole bucket, and starting from a checkpoint saved
// before the last 100 interchanges were committed. Batches of ten, as a
// hub under light load writes them. Run:
//
//	go test -run '^$' -bench RestartRead -benchtime 5x ./ledger/
func BenchmarkRestartRead(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 300_000} {
		srv := jetstreamtest.StartServer(b, nil)
		_, js := jetstreamtest.Connect(b, srv.URL)
		ctx := context.Background()
		path := filepath.Join(b.TempDir(), "ledger.index")
		w, err := OpenKV(ctx, js, &KVOptions{Checkpoint: path})
		if err != nil {
			b.Fatal(err)
		}
		commitKeys(b, w, 0, n-100)
		if _, err := w.Seen(ckKey(0)); err != nil {
			b.Fatal(err)
		}
		if err := w.Checkpoint(ctx); err != nil {
			b.Fatal(err)
		}
		commitKeys(b, w, n-100, n)
		for _, mode := range []string{"whole-bucket", "checkpoint"} {
			b.Run(fmt.Sprintf("interchanges=%d/%s", n, mode), func(b *testing.B) {
				o := &KVOptions{}
				if mode == "checkpoint" {
					o.Checkpoint = path
				}
				cpu0 := processCPU()
				for b.Loop() {
					s, err := BindKV(ctx, js, o)
					if err != nil {
						b.Fatal(err)
					}
					if seen, err := s.Seen(ckKey(n - 1)); err != nil || !seen {
						b.Fatalf("last interchange seen %v, %v", seen, err)
					}
					if s.Indexed() != n {
						b.Fatalf("indexed %d of %d", s.Indexed(), n)
					}
				}
				// CPU of this process (the embedded server's reads too): on a
				// loaded machine the wall time says more about the neighbours.
				b.ReportMetric(float64((processCPU()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
			})
		}
		srv.Stop()
	}
}

// BenchmarkLookup is the stage's duplicate check on an index in memory:
// what a healthy interchange costs the ledger before its commit.
//
//	go test -run '^$' -bench Lookup -benchmem ./ledger/
func BenchmarkLookup(b *testing.B) {
	o := KVOptions{TTL: time.Hour}
	o.setDefaults()
	s := newKVStore(nil, nil, o)
	s.ix.loaded.Store(true)
	k := Key{Partner: "P01", Sender: "SENDER01", Recipient: "RECIPIENT", ControlRef: "R000012345"}
	b.ReportAllocs()
	for b.Loop() {
		if dup, err := s.Duplicate(k, "INGEST:1"); err != nil || dup {
			b.Fatal(dup, err)
		}
	}
}

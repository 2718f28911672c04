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
// size: reading the whole bucket (no index file), and opening the index
// file written by a checkpoint before the last 100 interchanges were
// committed, then reading only those from the bucket. Batches of ten, as
// a hub under light load writes them. Run:
//
//	go test -run '^$' -bench RestartRead -benchtime 3x -timeout 60m ./ledger/
func BenchmarkRestartRead(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 300_000, 1_000_000} {
		srv := jetstreamtest.StartServer(b, nil)
		_, js := jetstreamtest.Connect(b, srv.URL)
		ctx := context.Background()
		path := filepath.Join(b.TempDir(), "ledger-index.db")
		w, err := OpenKV(ctx, js, &KVOptions{IndexFile: path})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Seen(ckKey(0)); err != nil {
			b.Fatal(err)
		}
		// checkpoints as serve's every minute would make them at ~800
		// interchanges a second
		for i := 0; i < n-100; i += 50_000 {
			commitKeys(b, w, i, min(i+50_000, n-100))
			if err := w.Checkpoint(ctx); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		if err := w.Checkpoint(ctx); err != nil {
			b.Fatal(err)
		}
		b.Logf("interchanges=%d: last checkpoint %v", n, time.Since(start))
		commitKeys(b, w, n-100, n)
		w.Close() // as a kill -9 would: the last 100 are only in the bucket
		for _, mode := range []string{"whole-bucket", "index-file"} {
			b.Run(fmt.Sprintf("interchanges=%d/%s", n, mode), func(b *testing.B) {
				o := &KVOptions{Timeout: 2 * time.Minute} // the whole bucket of a million takes longer than 5 s
				if mode == "index-file" {
					o.IndexFile = path
				}
				var cpu time.Duration
				for b.Loop() {
					cpu0 := processCPU()
					s, err := BindKV(ctx, js, o)
					if err != nil {
						b.Fatal(err)
					}
					if seen, err := s.Seen(ckKey(n - 1)); err != nil || !seen {
						b.Fatalf("last interchange seen %v, %v", seen, err)
					}
					if seen, err := s.Seen(ckKey(n / 2)); err != nil || !seen {
						b.Fatalf("an interchange from before the checkpoint seen %v, %v", seen, err)
					}
					cpu += processCPU() - cpu0
					b.StopTimer()
					if got := s.Indexed(); got != n {
						b.Fatalf("indexed %d of %d", got, n)
					}
					s.Close()
					b.StartTimer()
				}
				// CPU of this process (the embedded server's reads too): on a
				// loaded machine the wall time says more about the neighbours.
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
		srv.Stop()
	}
}

// BenchmarkLookup is the hot path's question, Duplicate, for an
// interchange not seen before (what almost every lookup is) and for one
// recorded long ago, against a million interchanges: held in memory (the
// index without a file) and in the index file (only what memory does not
// answer goes to it). No server: the index alone.
//
//	go test -run '^$' -bench Lookup -benchmem ./ledger/
func BenchmarkLookup(b *testing.B) {
	const n = 1_000_000
	at := time.Now().UnixNano()
	digestOf := func(i int) digest {
		var d digest
		binary.BigEndian.PutUint64(d[:], uint64(i)*0x9e3779b97f4a7c15)
		return d
	}
	mem := newIndex(30*24*time.Hour, time.Now)
	file := newIndex(30*24*time.Hour, time.Now)
	di, _, _, err := openDisk(filepath.Join(b.TempDir(), "ledger-index.db"), "bench", time.Unix(1, 0), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer di.close()
	file.disk = di
	batch := map[digest]mark{}
	for i := range n {
		m := mark{at: at, origin: "INGEST:" + strconv.Itoa(1_000_000+i)}
		mem.put(digestOf(i), m)
		batch[digestOf(i)] = m
		if len(batch) == flushAfter || i == n-1 {
			if err := di.write(batch, 0, time.Time{}, 0); err != nil {
				b.Fatal(err)
			}
			batch = map[digest]mark{}
		}
	}
	for _, c := range []struct {
		name string
		ix   *index
	}{{"memory", mem}, {"file", file}} {
		for _, kind := range []string{"new", "recorded"} {
			b.Run(c.name+"/"+kind, func(b *testing.B) {
				var next atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						i := int(next.Add(1)) % n
						want := kind == "recorded"
						if !want {
							i += n
						}
						_, ok, err := c.ix.get(digestOf(i))
						if err != nil || ok != want {
							b.Errorf("lookup %d: %v %v", i, ok, err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkIndexFileWrite is one write of the index file (a batch of new
// marks into a file that already holds a million): bbolt copies every page
// a batch changes, and digests spread over all of them, so a write costs
// about the file's size until batches are larger than its pages; the
// per-interchange figure is what a batch size costs the machine.
//
//	go test -run '^$' -bench IndexFileWrite -benchtime 3x ./ledger/
func BenchmarkIndexFileWrite(b *testing.B) {
	const n = 1_000_000
	at := time.Now().UnixNano()
	digestOf := func(i int) digest {
		var d digest
		binary.BigEndian.PutUint64(d[:], uint64(i)*0x9e3779b97f4a7c15)
		return d
	}
	di, _, _, err := openDisk(filepath.Join(b.TempDir(), "ledger-index.db"), "bench", time.Unix(1, 0), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer di.close()
	next := 0
	fill := func(size int) map[digest]mark {
		batch := make(map[digest]mark, size)
		for range size {
			batch[digestOf(next)] = mark{at: at, origin: "INGEST:" + strconv.Itoa(1_000_000+next)}
			next++
		}
		return batch
	}
	for next < n {
		if err := di.write(fill(200_000), 0, time.Time{}, 0); err != nil {
			b.Fatal(err)
		}
	}
	for _, size := range []int{1000, 16384, 65536, 262144} {
		b.Run(fmt.Sprint("batch=", size), func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				batch := fill(size)
				b.StartTimer()
				c0 := processCPU()
				if err := di.write(batch, 0, time.Time{}, 0); err != nil {
					b.Fatal(err)
				}
				cpu += processCPU() - c0
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*size), "cpu-µs/interchange")
		})
	}
}

// BenchmarkDuplicate is the stage's duplicate check on an index in memory:
// what a healthy interchange costs the ledger before its commit.
//
//	go test -run '^$' -bench Duplicate -benchmem ./ledger/
func BenchmarkDuplicate(b *testing.B) {
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

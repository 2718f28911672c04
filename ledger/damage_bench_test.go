package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// BenchmarkIndexRebuild is what a damaged index file costs, against the
// ledger's size:
//
//   - check: the check after open (verify) of a healthy file: one walk of
//     the marks and the expiry, then bbolt's tx.Check, in the background;
//   - restart-new: a restart's first lookup of a new interchange, which
//     waits for that check;
//   - rebuild: a leaf of the marks damaged, the check off, a store opened
//     and asked about an interchange of that leaf: answered after the
//     whole bucket is read (answer-ms), and the new file written to the
//     end (rebuilt-ms: the background writes, then a checkpoint).
//
// Batches of ten, checkpoints every 50 000, as BenchmarkRestartRead. Run:
//
//	go test -run '^$' -bench IndexRebuild -benchtime 1x -timeout 60m ./ledger/
//	go test -run '^$' -bench 'IndexRebuild/interchanges=100000$/' -benchtime 3x ./ledger/
func BenchmarkIndexRebuild(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("interchanges=%d", n), func(b *testing.B) { benchIndexRebuild(b, n) })
	}
}

func benchIndexRebuild(b *testing.B, n int) {
	srv := jetstreamtest.StartServer(b, nil)
	_, js := jetstreamtest.Connect(b, srv.URL)
	ctx := context.Background()
	dir := b.TempDir()
	path := filepath.Join(dir, "ledger-index.db")
	w, err := OpenKV(ctx, js, &KVOptions{IndexFile: path})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.Seen(ckKey(0)); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i += 50_000 {
		commitKeys(b, w, i, min(i+50_000, n))
		if err := w.Checkpoint(ctx); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("interchanges=%d: file %d MB", n, len(good)>>20)
	st, err := js.Stream(ctx, "KV_edihub-ledger")
	if err != nil {
		b.Fatal(err)
	}
	info := st.CachedInfo()
	restore := func() {
		kept, _ := filepath.Glob(path + ".damaged-*")
		for _, p := range append(kept, path) {
			_ = os.Remove(p)
		}
		if err := os.WriteFile(path, good, 0o600); err != nil {
			b.Fatal(err)
		}
	}

	b.Run("check", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			restore()
			di, _, err := openDiskFile(path, "edihub-ledger", info.Created, info.State.LastSeq)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			c0 := processCPU()
			if err := di.verify(); err != nil {
				b.Fatal(err)
			}
			cpu += processCPU() - c0
			b.StopTimer()
			di.close()
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	})

	// a restart's first lookup of a new interchange: it waits for the
	// check after open (a recorded one, or one in the bucket's tail,
	// does not: BenchmarkRestartRead)
	b.Run("restart-new", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			restore()
			s, err := BindKV(ctx, js, &KVOptions{IndexFile: path})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			c0 := processCPU()
			if seen, err := s.Seen(ckKey(n + 1)); err != nil || seen {
				b.Fatalf("a new interchange: seen %v, %v", seen, err)
			}
			cpu += processCPU() - c0
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	})

	b.Run("rebuild", func(b *testing.B) {
		defer func(v bool) { verifyAtOpen = v }(verifyAtOpen)
		verifyAtOpen = false
		var answer, rebuilt, cpuAnswer, cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			restore()
			on := damageLeaf(b, path, n)
			s, err := BindKV(ctx, js, &KVOptions{IndexFile: path, Timeout: 5 * time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			start, c0 := time.Now(), processCPU()
			if seen, err := s.Seen(ckKey(on[0])); err != nil || !seen {
				b.Fatalf("an interchange of the damaged page: seen %v, %v", seen, err)
			}
			answer += time.Since(start)
			cpuAnswer += processCPU() - c0
			if err := s.Checkpoint(ctx); err != nil {
				b.Fatal(err)
			}
			rebuilt += time.Since(start)
			cpu += processCPU() - c0
			b.StopTimer()
			if s.IndexRebuilds(RebuildLookup) != 1 || s.ix.inMemory() != 0 {
				b.Fatalf("rebuilds %d, %d marks not written", s.IndexRebuilds(RebuildLookup), s.ix.inMemory())
			}
			s.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(answer.Milliseconds())/float64(b.N), "answer-ms")
		b.ReportMetric(float64(cpuAnswer.Milliseconds())/float64(b.N), "answer-cpu-ms")
		b.ReportMetric(float64(rebuilt.Milliseconds())/float64(b.N), "rebuilt-ms")
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "rebuilt-cpu-ms")
	})
	srv.Stop()
}

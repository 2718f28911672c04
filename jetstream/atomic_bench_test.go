package jetstream_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// One atomic batch of n messages (PublishAtomic) and one fast batch
// (FastBatcher.Publish) against n pipelined publishes awaited together
// (PublishAll), each with a dedupe id, of a
// 3.3 KB body (a parsed 1 KB INVOIC): on an R1 file stream the server
// stages each atomic batch in a file store of its own, synced before the
// commit; in memory for a memory or a replicated stream.
//
//	go test -run '^$' -bench PublishGroup -benchtime 1000x ./jetstream/
func BenchmarkPublishGroup(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	one, err := ejs.StartServer(&ejs.ServerOptions{DataDir: b.TempDir(), Listen: "127.0.0.1:-1"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { one.Shutdown(); one.WaitForShutdown() })
	for _, c := range []struct {
		name    string
		url     string
		storage js.StorageType
		r       int
	}{
		{"r1-file", one.ClientURL(), js.FileStorage, 1},
		{"r1-memory", one.ClientURL(), js.MemoryStorage, 1},
		{"r3-file", jetstreamtest.StartCluster(b, 3), js.FileStorage, 3},
	} {
		nc, j, err := ejs.Connect(c.url, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := ejs.WaitReady(ctx, j); err != nil {
			b.Fatal(err)
		}
		name := strings.ToUpper(strings.ReplaceAll(c.name, "-", ""))
		for {
			_, err := ejs.EnsureStream(ctx, j, js.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: c.storage,
				Replicas: c.r, Duplicates: time.Minute, AllowAtomicPublish: true, AllowBatchPublish: true})
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				b.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // the cluster's meta leader settling
		}
		fb, err := ejs.NewFastBatcher(nc)
		if err != nil {
			b.Fatal(err)
		}
		body := make([]byte, 3300)
		seq := 0
		for _, n := range []int{1, 4, 16} {
			msgs := make([]*nats.Msg, n)
			for i := range msgs {
				msgs[i] = &nats.Msg{Subject: name + ".x", Header: nats.Header{"X": []string{"1"}}, Data: body}
			}
			b.Run(fmt.Sprintf("%s/atomic/%d", c.name, n), func(b *testing.B) {
				for b.Loop() {
					seq++
					s := seq
					if err := ejs.PublishAtomic(ctx, nc, msgs, func(i int) string { return fmt.Sprint("a", s, "-", i) }); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/msg")
			})
			b.Run(fmt.Sprintf("%s/fast/%d", c.name, n), func(b *testing.B) {
				for b.Loop() {
					seq++
					s := seq
					if err := fb.Publish(ctx, msgs, func(i int) string { return fmt.Sprint("f", s, "-", i) }); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/msg")
			})
			b.Run(fmt.Sprintf("%s/all/%d", c.name, n), func(b *testing.B) {
				for b.Loop() {
					seq++
					s := seq
					if _, err := ejs.PublishAll(ctx, j, msgs, func(i int) string { return fmt.Sprint("p", s, "-", i) }); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/msg")
			})
		}
		fb.Close()
		nc.Close()
	}
}

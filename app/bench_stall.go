package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/edihub/edihub/wire"
)

// stallAfter is how long a run may make no progress before --stall-dump
// records what every goroutine and every partition consumer is doing.
const stallAfter = 2 * time.Second

// watchStall (with --stall-dump) samples progress every 100 ms; when it
// has not moved for stallAfter it writes, once per stall, the goroutines
// of this process and the server's view of each consumer (waiting pull
// requests, messages delivered and not acked, messages pending) into
// b.stallDir, and notes it on stderr. It tells the three possible causes
// of a partition that sits still apart: the server holds no pull request
// (num_waiting 0: the client's request accounting is off), the server
// holds one and does not deliver (num_waiting > 0, ack pending 0), or a
// delivered message never reached the loop (ack pending 1).
func (b *bench) watchStall(ctx context.Context, label string, progress func() int64, consumers func() []string) (stop func()) {
	if b.stallDir == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		last, since, dumped := progress(), time.Now(), false
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if p := progress(); p != last {
				if dumped {
					fmt.Fprintf(os.Stderr, "stall %s: progress again after %v (%d → %d)\n", label, time.Since(since).Round(time.Millisecond), last, p)
				}
				last, since, dumped = p, time.Now(), false
				continue
			}
			if dumped || time.Since(since) < stallAfter || last == 0 {
				continue
			}
			dumped = true
			b.stalls.Add(1)
			b.dumpStall(ctx, label, last, consumers())
		}
	}()
	return cancel
}

func (b *bench) dumpStall(ctx context.Context, label string, progress int64, consumers []string) {
	n := b.stallSeq.Add(1)
	base := filepath.Join(b.stallDir, fmt.Sprintf("stall-%d-%d-%s", os.Getpid(), n, label))
	if f, err := os.Create(base + ".goroutines"); err == nil {
		_ = pprof.Lookup("goroutine").WriteTo(f, 2)
		f.Close()
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: no progress for %v at %d messages\n", label, stallAfter, progress)
	for _, name := range consumers {
		ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
		c, err := b.js.Consumer(ictx, wire.DefaultIngestStream, name)
		if err != nil {
			cancel()
			fmt.Fprintf(&sb, "  %s: %v\n", name, err)
			continue
		}
		info, err := c.Info(ictx)
		cancel()
		if err != nil {
			fmt.Fprintf(&sb, "  %s: %v\n", name, err)
			continue
		}
		flag := ""
		if info.NumPending > 0 && info.NumAckPending == 0 {
			flag = "   <- idle with messages pending"
		}
		fmt.Fprintf(&sb, "  %s: num_waiting=%d num_ack_pending=%d num_pending=%d delivered=%d ack_floor=%d redelivered=%d%s\n",
			name, info.NumWaiting, info.NumAckPending, info.NumPending, info.Delivered.Stream, info.AckFloor.Stream, info.NumRedelivered, flag)
	}
	_ = os.WriteFile(base+".consumers", []byte(sb.String()), 0o644)
	fmt.Fprintf(os.Stderr, "stall %s (dump %s.*):\n%s", label, base, sb.String())
}

// progressOf reads a counter for watchStall.
func progressOf(c *atomic.Int64) func() int64 { return c.Load }

func partitionConsumers(format string, parts int, args ...any) func() []string {
	return func() []string {
		out := make([]string, parts)
		for p := range parts {
			out[p] = fmt.Sprintf(format, append(args, p)...)
		}
		return out
	}
}

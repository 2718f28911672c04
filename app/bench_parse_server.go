package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/edihub/edihub/wire"
)

// What the parse bench reads from the server around each drain: the
// client traffic, the outputs PARSED stored, every stream's replicas; and
// the notes of a progress line.

// serverTraffic is the embedded server's count of client messages in
// and out.
type serverTraffic struct{ in, out float64 }

// traffic is the server's count of messages in and out; on a cluster the
// nodes' counts of client messages summed (the routes' traffic, the
// replication, left out: what the clients asked for, as on one server).
func (b *bench) traffic() serverTraffic {
	var t serverTraffic
	for _, s := range b.nodes {
		v, err := s.Varz(nil)
		if err != nil {
			return serverTraffic{}
		}
		if len(b.nodes) == 1 {
			return serverTraffic{in: float64(v.InMsgs), out: float64(v.OutMsgs)}
		}
		t.in += float64(v.InClientMsgs)
		t.out += float64(v.OutClientMsgs)
	}
	return t
}

// parsedLastSeq is PARSED's last sequence: what a drain added to it is
// the difference (a purge keeps the sequence).
func (b *bench) parsedLastSeq(ctx context.Context) (uint64, error) {
	st, err := b.js.Stream(ctx, wire.DefaultParsedStream)
	if err != nil {
		return 0, fmt.Errorf("PARSED: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("PARSED: %w", err)
	}
	return info.State.LastSeq, nil
}

// streamReplicas are the replicas of every stream (and bucket) on the
// server; one that is not at b.replicas is an error: the bench would have
// measured something else than it says.
func (b *bench) streamReplicas(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	var wrong []string
	l := b.js.ListStreams(ctx)
	for info := range l.Info() {
		out[info.Config.Name] = info.Config.Replicas
		if info.Config.Replicas != b.replicas {
			wrong = append(wrong, fmt.Sprintf("%s (R%d)", info.Config.Name, info.Config.Replicas))
		}
	}
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("list streams: %w", err)
	}
	if len(wrong) > 0 {
		return nil, fmt.Errorf("not at %d replicas: %s", b.replicas, strings.Join(wrong, ", "))
	}
	return out, nil
}

// spreadNote says when the partitions started a second or more apart.
func spreadNote(d time.Duration) string {
	if d < time.Second {
		return ""
	}
	return fmt.Sprintf("   partitions started over %.1f s", d.Seconds())
}

func storedNote(stored uint64, want int) string {
	if stored == uint64(want) {
		return ""
	}
	return fmt.Sprintf("   (%d outputs stored, want %d!)", stored, want)
}

func (t serverTraffic) minus(u serverTraffic) serverTraffic {
	return serverTraffic{in: t.in - u.in, out: t.out - u.out}
}

func (t serverTraffic) per(n int) serverTraffic {
	return serverTraffic{in: t.in / float64(n), out: t.out / float64(n)}
}

func failNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("   (%d not ok!)", n)
}

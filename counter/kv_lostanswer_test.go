package counter

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// answerLost stores its first write and then reports it as unanswered, as
// a write is when the stream leader that stored it died before its ack
// came back.
type answerLost struct {
	jetstream.KeyValue
	lost int
}

func (a *answerLost) Update(ctx context.Context, key string, v []byte, rev uint64) (uint64, error) {
	r, err := a.KeyValue.Update(ctx, key, v, rev)
	if err == nil && a.lost == 0 {
		a.lost++
		return 0, nats.ErrTimeout
	}
	return r, err
}

func (a *answerLost) Create(ctx context.Context, key string, v []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	r, err := a.KeyValue.Create(ctx, key, v, opts...)
	if err == nil && a.lost == 0 {
		a.lost++
		return 0, nats.ErrTimeout
	}
	return r, err
}

// A write stored but never answered is tried again from the read, which
// finds what it wrote: the failure is counted once, not twice, both for a
// new record (Create) and an existing one (Update).
func TestKVWriteWhoseAnswerWasLostCountsOnce(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, &KVOptions{Bucket: testName(t), Timeout: time.Minute, Attempt: time.Second})
	kv := s.kv
	for i, existing := range []bool{false, true} {
		s.kv = kv
		k := Key{"INGEST", "ingest-p0", uint64(i + 1)}
		want := 1
		if existing {
			if _, err := s.RecordFailure(k, Failure{Fingerprint: "x", Delivery: 1}); err != nil {
				t.Fatal(err)
			}
			want = 2
		}
		lossy := &answerLost{KeyValue: s.kv}
		s.kv = lossy
		r, err := s.RecordFailure(k, Failure{Fingerprint: "x", Delivery: uint64(want)})
		if err != nil {
			t.Fatal(err)
		}
		if lossy.lost != 1 {
			t.Fatalf("existing %v: no answer was lost", existing)
		}
		got, err := s.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if r.Count != want || got.Count != want {
			t.Fatalf("existing %v: returned %d, stored %d failures; want %d", existing, r.Count, got.Count, want)
		}
	}
}

// Without tries (Attempt 0) a write whose answer was lost is an error, as
// before: the hub keeps the outcome in memory.
func TestKVWriteWhoseAnswerWasLostWithoutTries(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, js := jetstreamtest.Connect(t, srv.URL)
	s := openKV(t, js, &KVOptions{Bucket: testName(t)})
	s.kv = &answerLost{KeyValue: s.kv}
	if _, err := s.RecordFailure(Key{"INGEST", "ingest-p0", 1}, Failure{Fingerprint: "x"}); err == nil {
		t.Fatal("a lost answer without tries reported success")
	}
}

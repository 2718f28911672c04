package partner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
)

// ackRefs hands out the block numbers our acknowledgement control
// references are made of (ackBuilder.ref, x12Ref): one counter per partner
// in a KV bucket (wire.DefaultAckRefBucket), so references keep counting up
// when the INGEST stream is recreated and its sequences start again, instead
// of reusing A10 / 000000010 for the same partner. A new counter starts at
// the minutes since 2020, so that even a fresh data folder starts past the
// references of recent days (for a partner with fewer acknowledged
// interchanges than minutes; a busier one may still meet old numbers).
type ackRefs struct {
	kv  js.KeyValue
	now func() time.Time
}

// blockLimit keeps a block below 10^8: x12Ref appends one digit and ISA13
// has nine.
const blockLimit = 100_000_000

var epoch2020 = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

func newAckRefs(ctx context.Context, j js.JetStream, bucket string, replicas int, now func() time.Time) (*ackRefs, error) {
	kv, err := ejs.EnsureKeyValue(ctx, j, js.KeyValueConfig{Bucket: bucket, History: 1, Replicas: replicas, Storage: js.FileStorage,
		Description: "edihub: per-partner acknowledgement reference counters"})
	if err != nil {
		return nil, fmt.Errorf("acknowledgement reference bucket %s: %w", bucket, err)
	}
	return &ackRefs{kv: kv, now: now}, nil
}

// next reserves the next block for partner (compare-and-set, a bounded
// number of tries when instances race).
func (a *ackRefs) next(ctx context.Context, partner string) (uint64, error) {
	floor := uint64(a.now().Sub(epoch2020)/time.Minute) % blockLimit
	for range 16 {
		e, err := a.kv.Get(ctx, partner)
		switch {
		case errors.Is(err, js.ErrKeyNotFound):
			n := max(floor, 1)
			if _, err := a.kv.Create(ctx, partner, encode(n)); err == nil {
				return n, nil
			} else if !errors.Is(err, js.ErrKeyExists) {
				return 0, err
			}
			continue
		case err != nil:
			return 0, err
		}
		var last uint64
		if len(e.Value()) == 8 {
			last = binary.BigEndian.Uint64(e.Value())
		}
		n := (last + 1) % blockLimit
		if n == 0 {
			n = 1
		}
		if _, err := a.kv.Update(ctx, partner, encode(n), e.Revision()); err == nil {
			return n, nil
		} else if !errors.Is(err, js.ErrKeyExists) {
			return 0, err
		}
	}
	return 0, fmt.Errorf("acknowledgement reference of %s: too many concurrent updates", partner)
}

func encode(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}

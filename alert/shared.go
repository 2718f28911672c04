package alert

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
)

// Limiter shares the rate limit of alerts between the instances of a
// cluster. Claim reports whether this instance may send the alert named by
// key now; false means another one sent it within the interval.
type Limiter interface {
	Claim(ctx context.Context, key string) (bool, error)
}

// KVLimiter is a Limiter on a JetStream KV bucket whose MaxAge is the
// alert interval: the first instance to create an alert's key sends it,
// the others find the key and stay quiet until the server expires it. Only
// the server's clock counts, so instances with skewed clocks still send
// one page per interval.
type KVLimiter struct {
	kv js.KeyValue
}

// KVLimiterOptions configure OpenKVLimiter.
type KVLimiterOptions struct {
	// Bucket names the KV bucket (required).
	Bucket string
	// Interval is the rate limit, the keys' lifetime (required).
	Interval time.Duration
	// Replicas of the bucket (1; 3 on a cluster).
	Replicas int
}

// OpenKVLimiter creates or updates the bucket and returns a limiter on it.
func OpenKVLimiter(ctx context.Context, j js.JetStream, o KVLimiterOptions) (*KVLimiter, error) {
	if o.Bucket == "" || o.Interval <= 0 {
		return nil, errors.New("alert limiter: a bucket and an interval are required")
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	kv, err := ejs.EnsureKeyValue(ctx, j, js.KeyValueConfig{
		Bucket: o.Bucket, Description: "edihub alert rate limits shared by the hub instances",
		TTL: o.Interval, History: 1, Replicas: o.Replicas, Storage: js.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("alert limit bucket %s: %w", o.Bucket, err)
	}
	return &KVLimiter{kv: kv}, nil
}

// Claim creates the key of the alert; it exists already when another
// instance sent the alert within the interval.
func (l *KVLimiter) Claim(ctx context.Context, key string) (bool, error) {
	sum := sha256.Sum256([]byte(key))
	_, err := l.kv.Create(ctx, "a."+hex.EncodeToString(sum[:16]), []byte(time.Now().UTC().Format(time.RFC3339Nano)))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, js.ErrKeyExists):
		return false, nil
	default:
		return false, fmt.Errorf("claim alert: %w", err)
	}
}

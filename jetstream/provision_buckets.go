package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// EnsureKeyValue creates the bucket, or binds to it when it exists and
// updates it only when a setting the caller states differs. It is the one
// way the hub's packages open a bucket they own (see EnsureStream for why
// never CreateOrUpdate).
func EnsureKeyValue(ctx context.Context, j js.JetStream, want js.KeyValueConfig) (js.KeyValue, error) {
	var kv js.KeyValue
	err := retryTransient(ctx, func(actx context.Context) error {
		var err error
		kv, err = ensureKeyValueOnce(actx, j, want)
		return err
	})
	return kv, err
}

func ensureKeyValueOnce(ctx context.Context, j js.JetStream, want js.KeyValueConfig) (js.KeyValue, error) {
	kv, err := j.CreateKeyValue(ctx, want)
	if err == nil {
		return kv, nil
	}
	if !errors.Is(err, js.ErrBucketExists) {
		return nil, fmt.Errorf("create bucket %s: %w", want.Bucket, err)
	}
	kv, err = j.KeyValue(ctx, want.Bucket)
	if err != nil {
		return nil, fmt.Errorf("bind bucket %s: %w", want.Bucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", want.Bucket, err)
	}
	bs, ok := st.(*js.KeyValueBucketStatus)
	if !ok {
		return kv, nil
	}
	diff := kvDiff(bs.Config(), want)
	if len(diff) == 0 {
		return kv, nil
	}
	if bs.Config().Storage != want.Storage {
		return nil, permanent(fmt.Errorf("bucket %s: JetStream cannot change its storage (%v → %v); back up and delete the bucket to re-create it",
			want.Bucket, bs.Config().Storage, want.Storage))
	}
	kv, err = j.UpdateKeyValue(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: JetStream refused to change %s: %w", want.Bucket, strings.Join(diff, ", "), err)
	}
	return kv, nil
}

// kvDiff lists the settings of want that differ from have; zero values in
// want mean the server's default and are compared as such.
func kvDiff(have, want js.KeyValueConfig) []string {
	var out []string
	hist := max(want.History, 1)
	if have.History != hist {
		out = append(out, "History")
	}
	if have.TTL != want.TTL {
		out = append(out, "TTL")
	}
	if want.MaxBytes != 0 && have.MaxBytes != want.MaxBytes {
		out = append(out, "MaxBytes")
	}
	if max(want.Replicas, 1) != have.Replicas {
		out = append(out, "Replicas")
	}
	if have.Storage != want.Storage {
		out = append(out, "Storage")
	}
	if have.LimitMarkerTTL != want.LimitMarkerTTL {
		out = append(out, "LimitMarkerTTL")
	}
	if want.Description != "" && have.Description != want.Description {
		out = append(out, "Description")
	}
	return out
}

// EnsureObjectStore is EnsureKeyValue for an object store bucket.
func EnsureObjectStore(ctx context.Context, j js.JetStream, want js.ObjectStoreConfig) (js.ObjectStore, error) {
	var obj js.ObjectStore
	err := retryTransient(ctx, func(actx context.Context) error {
		var err error
		obj, err = ensureObjectStoreOnce(actx, j, want)
		return err
	})
	return obj, err
}

func ensureObjectStoreOnce(ctx context.Context, j js.JetStream, want js.ObjectStoreConfig) (js.ObjectStore, error) {
	obj, err := j.CreateObjectStore(ctx, want)
	if err == nil {
		return obj, nil
	}
	if !errors.Is(err, js.ErrBucketExists) {
		return nil, fmt.Errorf("create object store %s: %w", want.Bucket, err)
	}
	obj, err = j.ObjectStore(ctx, want.Bucket)
	if err != nil {
		return nil, fmt.Errorf("bind object store %s: %w", want.Bucket, err)
	}
	st, err := obj.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("object store %s: %w", want.Bucket, err)
	}
	var diff []string
	if max(want.Replicas, 1) != st.Replicas() {
		diff = append(diff, "Replicas")
	}
	if st.TTL() != want.TTL {
		diff = append(diff, "TTL")
	}
	if want.MaxBytes != 0 {
		if bs, ok := st.(*js.ObjectBucketStatus); ok && bs.StreamInfo().Config.MaxBytes != want.MaxBytes {
			diff = append(diff, "MaxBytes")
		}
	}
	if want.Description != "" && st.Description() != want.Description {
		diff = append(diff, "Description")
	}
	if len(diff) == 0 {
		return obj, nil
	}
	if st.Storage() != want.Storage {
		return nil, permanent(fmt.Errorf("object store %s: JetStream cannot change its storage (%v → %v); back up and delete the bucket to re-create it",
			want.Bucket, st.Storage(), want.Storage))
	}
	obj, err = j.UpdateObjectStore(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("object store %s: JetStream refused to change %s: %w", want.Bucket, strings.Join(diff, ", "), err)
	}
	return obj, nil
}

// attemptTimeout bounds one provisioning request: a cluster that lost a
// proposal answers never, and the next attempt is sent instead.
const attemptTimeout = 5 * time.Second

// JetStream API error codes (nats-server's jetstream_errors_generated.go)
// of a cluster that is still forming.
const (
	codeNoSuitablePeers     = 10005
	codeClusterNotAvailable = 10008
	codeNotLeader           = 10009
	codeJetStreamNotEnabled = 10076
)

// permanentError marks an answer no retry changes.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return Permanent(err) }

// retryTransient runs f until it succeeds, fails for good, or ctx ends,
// each try bounded by attemptTimeout.
func retryTransient(ctx context.Context, f func(context.Context) error) error {
	return Retry(ctx, attemptTimeout, f)
}

// Transient says whether a JetStream API error is the cluster's passing
// state (no meta leader yet, peers not placed yet, a lost request) rather
// than an answer about the request.
func Transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, js.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionReconnecting) {
		return true
	}
	var api *js.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode {
		case codeClusterNotAvailable, codeNoSuitablePeers, codeNotLeader, codeJetStreamNotEnabled:
			return true
		}
		return api.Code == 503
	}
	return false
}

package hub

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	ejs "github.com/edihub/edihub/jetstream"
)

// Pause is one paused partner, as stored in the pause bucket.
type Pause struct {
	Partner  string    `json:"partner"`
	At       time.Time `json:"at"`
	By       string    `json:"by"` // the instance that paused it
	Failures int       `json:"failures"`
	Messages int       `json:"messages"` // settled in the window, failures included
	Window   string    `json:"window"`
}

// ErrNotPaused: resume named a partner that is not paused.
var ErrNotPaused = errors.New("partner is not paused")

// PauseStore is the KV bucket of paused partners: every instance watches
// it, so a pause taken by one holds the partner on all, and survives
// restarts until an operator resumes it.
type PauseStore struct{ kv js.KeyValue }

// OpenPauses creates or binds the pause bucket.
func OpenPauses(ctx context.Context, j js.JetStream, bucket string, replicas int) (*PauseStore, error) {
	kv, err := ejs.EnsureKeyValue(ctx, j, js.KeyValueConfig{
		Bucket: bucket, Description: "edihub paused partners (the bulkhead); edihub partner resume releases one",
		History: 1, Replicas: max(replicas, 1), Storage: js.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("pause bucket %s: %w", bucket, err)
	}
	return &PauseStore{kv: kv}, nil
}

// BindPauses binds the pause bucket without creating it (the CLI): a hub
// that never ran with the bulkhead has no pauses.
func BindPauses(ctx context.Context, j js.JetStream, bucket string) (*PauseStore, error) {
	kv, err := j.KeyValue(ctx, bucket)
	if errors.Is(err, js.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pause bucket %s: %w", bucket, err)
	}
	return &PauseStore{kv: kv}, nil
}

// pauseKey is a partner's key: partner IDs are the publisher's subject
// token, whose characters a key may not all take.
func pauseKey(partner string) string { return "p." + hex.EncodeToString([]byte(partner)) }

func partnerOfKey(k string) (string, bool) {
	if len(k) < 3 || k[:2] != "p." {
		return "", false
	}
	b, err := hex.DecodeString(k[2:])
	return string(b), err == nil
}

// Put stores p; a partner already paused keeps its first pause
// (created reports whether this one was stored).
func (s *PauseStore) Put(ctx context.Context, p Pause) (created bool, err error) {
	b, err := json.Marshal(p)
	if err != nil {
		return false, err
	}
	_, err = s.kv.Create(ctx, pauseKey(p.Partner), b)
	if errors.Is(err, js.ErrKeyExists) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store the pause of %q: %w", p.Partner, err)
	}
	return true, nil
}

// Resume deletes partner's pause and returns it; ErrNotPaused when there
// is none.
func (s *PauseStore) Resume(ctx context.Context, partner string) (Pause, error) {
	p, e, err := s.read(ctx, partner)
	if errors.Is(err, js.ErrKeyNotFound) {
		return p, fmt.Errorf("%q: %w", partner, ErrNotPaused)
	}
	if err != nil {
		return p, err
	}
	// Only the revision read: a pause taken again meanwhile is a new one.
	if err := s.kv.Delete(ctx, pauseKey(partner), js.LastRevision(e.Revision())); err != nil {
		return p, fmt.Errorf("resume %q: %w", partner, err)
	}
	return p, nil
}

// Paused returns partner's pause, if it is paused (one read; a nil store,
// a bucket never made, holds none).
func (s *PauseStore) Paused(ctx context.Context, partner string) (Pause, bool, error) {
	if s == nil {
		return Pause{}, false, nil
	}
	p, _, err := s.read(ctx, partner)
	if errors.Is(err, js.ErrKeyNotFound) {
		return Pause{}, false, nil
	}
	return p, err == nil, err
}

// read is partner's pause and its entry; js.ErrKeyNotFound when there is
// none.
func (s *PauseStore) read(ctx context.Context, partner string) (Pause, js.KeyValueEntry, error) {
	p := Pause{Partner: partner}
	e, err := s.kv.Get(ctx, pauseKey(partner))
	if errors.Is(err, js.ErrKeyNotFound) {
		return p, nil, err
	}
	if err != nil {
		return p, nil, fmt.Errorf("read the pause of %q: %w", partner, err)
	}
	_ = json.Unmarshal(e.Value(), &p)
	p.Partner = partner
	return p, e, nil
}

// List returns the paused partners, oldest pause first.
func (s *PauseStore) List(ctx context.Context) ([]Pause, error) {
	out := []Pause{}
	if s == nil {
		return out, nil
	}
	keys, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the paused partners: %w", err)
	}
	for k := range keys.Keys() {
		partner, ok := partnerOfKey(k)
		if !ok {
			continue
		}
		p, _, err := s.read(ctx, partner)
		if errors.Is(err, js.ErrKeyNotFound) {
			continue // resumed meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// watch calls set for every pause in the bucket and every one taken
// later, and clear for every resume, until ctx is done; loaded once the
// pauses stored before are all in.
func (s *PauseStore) watch(ctx context.Context, set func(Pause), clear func(partner string), loaded func()) error {
	w, err := s.kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch the paused partners: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("the watch of the paused partners ended")
			}
			if e == nil { // the initial values are all in
				if loaded != nil {
					loaded()
					loaded = nil
				}
				continue
			}
			partner, ok := partnerOfKey(e.Key())
			if !ok {
				continue
			}
			if e.Operation() != js.KeyValuePut {
				clear(partner)
				continue
			}
			var p Pause
			_ = json.Unmarshal(e.Value(), &p)
			p.Partner = partner
			set(p)
		}
	}
}

// ResumePartner lifts partner's pause, so that every instance runs its
// waiting messages (in order), and records who did it and why in the
// audit trail.
func ResumePartner(ctx context.Context, s *PauseStore, a *audit.Auditor, partner, actor, reason string) (Pause, error) {
	if s == nil {
		return Pause{Partner: partner}, fmt.Errorf("%q: %w", partner, ErrNotPaused)
	}
	p, err := s.Resume(ctx, partner)
	if err != nil {
		return p, err
	}
	if _, err := a.Append(ctx, audit.Event{Actor: actor, Action: "partner-resumed", IDs: []string{partner}, Reason: reason,
		Details: map[string]string{"paused_at": p.At.Format(time.RFC3339Nano), "paused_by": p.By,
			"failures": strconv.Itoa(p.Failures), "messages": strconv.Itoa(p.Messages)},
	}, fmt.Sprintf("partner-resumed-%s-%d", pauseKey(partner), p.At.UnixNano())); err != nil {
		return p, fmt.Errorf("partner %q resumed, but the audit event was not written: %w", partner, err)
	}
	return p, nil
}

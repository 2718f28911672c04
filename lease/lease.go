package lease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	ejs "github.com/edihub/edihub/jetstream"
)

// Options configure a Manager. A nil *Options means defaults.
type Options struct {
	// Bucket is the KV bucket of the leases ("edihub-leases").
	Bucket string
	// TTL is how long a lease outlives its holder's last renewal (10 s):
	// the fail-over time of a singleton after its process died.
	TTL time.Duration
	// Replicas of the bucket (1; 3 on a cluster).
	Replicas int
	// Holder names this process in the lease's value (host:pid).
	Holder string
	// Logger receives take-overs and losses (component=lease).
	Logger *zerolog.Logger
}

func (o *Options) setDefaults() {
	if o.Bucket == "" {
		o.Bucket = "edihub-leases"
	}
	if o.TTL == 0 {
		o.TTL = 10 * time.Second
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Holder == "" {
		o.Holder = "unnamed"
	}
}

// Validate reports settings that cannot work.
func (o *Options) Validate() error {
	if o.TTL < time.Second {
		return fmt.Errorf("lease ttl %v: must be at least 1s", o.TTL)
	}
	if o.Replicas < 1 || o.Replicas > 5 {
		return fmt.Errorf("lease replicas %d: must be 1 to 5", o.Replicas)
	}
	return nil
}

// ErrLost says the lease is held by another process now.
var ErrLost = errors.New("lease lost to another process")

// Manager takes and renews leases in one bucket.
type Manager struct {
	kv   js.KeyValue
	opts Options
	log  zerolog.Logger
}

// Open creates or updates the bucket (MaxAge = TTL) and returns a manager.
func Open(ctx context.Context, j js.JetStream, opts *Options) (*Manager, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.setDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	kv, err := ejs.EnsureKeyValue(ctx, j, js.KeyValueConfig{
		Bucket: o.Bucket, Description: "edihub singleton leases (one holder at a time)",
		TTL: o.TTL, History: 1, Replicas: o.Replicas, Storage: js.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("lease bucket %s: %w", o.Bucket, err)
	}
	log := zerolog.Nop()
	if o.Logger != nil {
		log = o.Logger.With().Str("component", "lease").Logger()
	}
	return &Manager{kv: kv, opts: o, log: log}, nil
}

// Held is a lease this process holds.
type Held struct {
	m     *Manager
	name  string
	token uint64 // the revision at take-over: only grows, holder after holder

	mu  sync.Mutex
	rev uint64 // the revision of the last renewal
	at  time.Time
}

// Token is the fencing token: larger for every later holder.
func (h *Held) Token() uint64 { return h.token }

// TryAcquire takes the lease name if no process holds it; nil, nil when
// one does.
func (m *Manager) TryAcquire(ctx context.Context, name string) (*Held, error) {
	now := time.Now()
	rev, err := m.kv.Create(ctx, key(name), []byte(m.opts.Holder))
	if errors.Is(err, js.ErrKeyExists) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("take lease %s: %w", name, err)
	}
	return &Held{m: m, name: name, token: rev, rev: rev, at: now}, nil
}

// Renew extends the lease; ErrLost when another process took it (the key
// changed or expired since the last renewal).
func (h *Held) Renew(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	rev, err := h.m.kv.Update(ctx, key(h.name), []byte(h.m.opts.Holder), h.rev)
	if err != nil {
		var apiErr *js.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == js.JSErrCodeStreamWrongLastSequence {
			return fmt.Errorf("lease %s: %w", h.name, ErrLost)
		}
		return fmt.Errorf("renew lease %s: %w", h.name, err)
	}
	h.rev, h.at = rev, now
	return nil
}

// Fence renews the lease now: an action with an effect outside the
// process (an alert) calls it first and does not act on an error. A
// holder that was paused past the TTL finds its lease taken and stops.
func (h *Held) Fence(ctx context.Context) error { return h.Renew(ctx) }

// Release gives the lease up at once (on shutdown), if still held.
func (h *Held) Release(ctx context.Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = h.m.kv.Delete(ctx, key(h.name), js.LastRevision(h.rev))
}

// sinceRenewal is the time since the last successful renewal began.
func (h *Held) sinceRenewal() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Since(h.at)
}

func key(name string) string {
	return "lease." + strings.NewReplacer(" ", "_", "*", "_", ">", "_").Replace(name)
}

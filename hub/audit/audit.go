package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// Event is one entry of the AUDIT stream. Hash is the SHA-256 of the
// event's canonical JSON with Hash empty; Prev is the Hash of the event
// before it, so a changed or missing event breaks the chain.
type Event struct {
	Time          time.Time         `json:"time"`
	Actor         string            `json:"actor"`
	Action        string            `json:"action"`
	IDs           []string          `json:"ids,omitempty"`
	Reason        string            `json:"reason,omitempty"`
	PayloadBefore string            `json:"payload_sha256_before,omitempty"`
	PayloadAfter  string            `json:"payload_sha256_after,omitempty"`
	Details       map[string]string `json:"details,omitempty"`
	Prev          string            `json:"prev"`
	Hash          string            `json:"hash"`
}

// computeHash returns the event's hash over its fields with Hash cleared.
func (e Event) computeHash() string {
	e.Hash = ""
	b, _ := json.Marshal(e) // struct of strings and maps: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// PayloadHash is the hex SHA-256 of a payload, as audit events record it.
func PayloadHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Auditor appends hash-chained events to the AUDIT stream. Several
// processes may append (the hub, the CLI): each append states the stream's
// last sequence it chained onto, and retries on a race.
type Auditor struct {
	js     js.JetStream
	stream string
	now    func() time.Time

	mu      sync.Mutex
	lastSeq uint64
	last    string
	loaded  bool
}

// New returns an auditor for the named stream.
func New(j js.JetStream, stream string) *Auditor {
	return &Auditor{js: j, stream: stream, now: time.Now}
}

// load reads the stream's last event to chain onto.
func (a *Auditor) load(ctx context.Context) error {
	s, err := a.js.Stream(ctx, a.stream)
	if err != nil {
		return fmt.Errorf("audit stream %s: %w", a.stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("audit stream %s: %w", a.stream, err)
	}
	a.lastSeq, a.last = info.State.LastSeq, ""
	if info.State.Msgs > 0 {
		raw, err := s.GetMsg(ctx, info.State.LastSeq)
		if err != nil {
			return fmt.Errorf("read last audit event: %w", err)
		}
		var ev Event
		if err := json.Unmarshal(raw.Data, &ev); err != nil {
			return fmt.Errorf("last audit event %d is not an event: %w", raw.Sequence, err)
		}
		a.last = ev.Hash
	}
	a.loaded = true
	return nil
}

// Append chains ev onto the stream and publishes it; dedupeID (may be
// empty) lets a re-append after a crash be recognised by the server.
func (a *Auditor) Append(ctx context.Context, ev Event, dedupeID string) (Event, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ev.Time.IsZero() {
		ev.Time = a.now().UTC()
	}
	for try := 0; try < 10; try++ {
		if !a.loaded {
			if err := a.load(ctx); err != nil {
				return ev, err
			}
		}
		ev.Prev = a.last
		ev.Hash = ev.computeHash()
		b, _ := json.Marshal(ev)
		opts := []js.PublishOpt{js.WithExpectLastSequence(a.lastSeq)}
		if dedupeID != "" {
			opts = append(opts, js.WithMsgID(dedupeID))
		}
		ack, err := a.js.PublishMsg(ctx, &nats.Msg{Subject: wire.AuditSubject, Data: b}, opts...)
		if err != nil {
			var apiErr *js.APIError
			if errors.As(err, &apiErr) && apiErr.ErrorCode == js.JSErrCodeStreamWrongLastSequence {
				a.loaded = false // someone else appended: chain onto theirs
				continue
			}
			return ev, fmt.Errorf("append audit event %s: %w", ev.Action, err)
		}
		if ack.Duplicate {
			a.loaded = false // already there from before a crash; reload
			return ev, nil
		}
		a.lastSeq, a.last = ack.Sequence, ev.Hash
		return ev, nil
	}
	return ev, fmt.Errorf("append audit event %s: lost the race 10 times", ev.Action)
}

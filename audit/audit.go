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
// before it, so a changed or missing event breaks the chain. MAC is the
// HMAC-SHA256, with the key KID of the hub's keyring, of the canonical
// JSON with Hash and MAC empty: without the key, nobody can append an
// event that verifies. Events written before keys existed have neither.
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
	KID           string            `json:"kid,omitempty"`
	MAC           string            `json:"mac,omitempty"`
	Hash          string            `json:"hash"`
}

// macDomain separates audit MACs from the other MACs of the same key.
const macDomain = "edihub-audit-event-v1"

// macInput is the canonical JSON the MAC covers: Hash and MAC empty.
func (e Event) macInput() []byte {
	e.Hash, e.MAC = "", ""
	b, _ := json.Marshal(e)
	return b
}

// wellFormed: the stored bytes decoded into something that claims to be an
// event (an action and a hash), not some other JSON.
func (e Event) wellFormed() bool { return e.Action != "" && e.Hash != "" && !e.Time.IsZero() }

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
// last sequence it chained onto, and retries on a race. With a keyring
// every event carries a MAC.
type Auditor struct {
	js     js.JetStream
	stream string
	now    func() time.Time
	keys   *Keyring
	signed bool // Signed: never append without a key

	mu      sync.Mutex
	lastSeq uint64
	last    string
	loaded  bool
}

// Option configures an Auditor.
type Option func(*Auditor)

// WithKeyring signs every appended event with the keyring's current key
// and chains only onto events whose MAC verifies. Nil: no MACs.
func WithKeyring(k *Keyring) Option { return func(a *Auditor) { a.keys = k } }

// Signed makes Append refuse (ErrUnsigned) when there is no keyring: the
// CLI never writes an event `audit verify` would call forged.
func Signed() Option { return func(a *Auditor) { a.signed = true } }

// ErrUnsigned: an auditor that must sign has no key.
var ErrUnsigned = errors.New("no audit key: an unsigned audit event is never written")

// New returns an auditor for the named stream.
func New(j js.JetStream, stream string, opts ...Option) *Auditor {
	a := &Auditor{js: j, stream: stream, now: time.Now}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Keyring returns the auditor's keyring (nil without one), for Verify.
func (a *Auditor) Keyring() *Keyring { return a.keys }

// scanBack bounds how far load looks back for an authentic event.
const scanBack = 1024

// authentic reports whether a stored event may be chained onto: it is an
// event, its hash matches, and (with a keyring) its MAC verifies.
func (a *Auditor) authentic(ev Event) bool {
	if !ev.wellFormed() || ev.computeHash() != ev.Hash {
		return false
	}
	if a.keys == nil {
		return true
	}
	return ev.MAC != "" && a.keys.Check(macDomain, ev.KID, ev.MAC, ev.macInput()) == nil
}

// load finds what to chain onto: the stream's last sequence (for the
// expected-last-sequence check) and the hash of the last authentic event.
// Foreign, malformed, altered or forged messages after it are skipped, so
// one junk message on the audit subject cannot block every audited action;
// `audit verify` names them. It looks back at most scanBack messages; with
// a keyring and no signed event among them it chains onto the last well
// formed one (legacy events from before keys, or a flood that verify
// reports).
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
	fallback, haveFallback := "", false
	for seq, n := info.State.LastSeq, 0; info.State.Msgs > 0 && seq >= max(info.State.FirstSeq, 1) && n < scanBack; seq, n = seq-1, n+1 {
		raw, err := s.GetMsg(ctx, seq)
		if errors.Is(err, js.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read audit event %d: %w", seq, err)
		}
		var ev Event
		if json.Unmarshal(raw.Data, &ev) != nil {
			continue
		}
		if a.authentic(ev) {
			a.last = ev.Hash
			a.loaded = true
			return nil
		}
		if !haveFallback && ev.wellFormed() && ev.computeHash() == ev.Hash && ev.MAC == "" {
			fallback, haveFallback = ev.Hash, true
		}
	}
	a.last = fallback
	a.loaded = true
	return nil
}

// Append chains ev onto the stream and publishes it; dedupeID (may be
// empty) lets a re-append after a crash be recognised by the server.
func (a *Auditor) Append(ctx context.Context, ev Event, dedupeID string) (Event, error) {
	if a.signed && a.keys == nil {
		return ev, ErrUnsigned
	}
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
		ev.Prev, ev.KID, ev.MAC = a.last, "", ""
		if a.keys != nil {
			ev.KID = a.keys.CurrentID()
			_, ev.MAC = a.keys.Sign(macDomain, ev.macInput())
		}
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

// GenesisAction is the keyed event serve appends when it creates the audit
// key: from it on, an event without a MAC is unauthenticated, never legacy,
// even on a trail that had no keyed event yet.
const GenesisAction = "audit-key-created"

// Genesis appends the keyed genesis event naming the key's ID. Without a
// keyring it does nothing.
func (a *Auditor) Genesis(ctx context.Context, actor string) error {
	if a.keys == nil {
		return nil
	}
	_, err := a.Append(ctx, Event{Action: GenesisAction, Actor: actor, Details: map[string]string{"kid": a.keys.CurrentID()}},
		"audit:genesis:"+a.keys.CurrentID())
	return err
}

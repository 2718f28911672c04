package ops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/wire"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// Ops is the operator's side of the hub: list, inspect, show, replay,
// park, drop and edit messages in the DLQ, PARKING and POISON streams, and
// read and verify the audit trail. The CLI (`edihub dlq`, `edihub audit`)
// and the HTTP API both call it, so both behave alike and audit alike.
//
// Nothing here runs on its own: every replay is asked for by a person (or
// a script acting for one) and named in the audit trail.
type Ops struct {
	o   OpsOptions
	log zerolog.Logger
}

// OpsOptions are the dependencies of Ops. JS and Auditor are required.
type OpsOptions struct {
	JS      js.JetStream
	Streams wire.StreamNames // zero fields: defaults
	Auditor *audit.Auditor
	// Actor names the person in audit events (OS user, --actor, or the
	// API token's name).
	Actor string
	// Now and Sleep are the clock of bulk replays; tests inject a fake one
	// so that rate limits are checked without real waiting.
	Now   func() time.Time
	Sleep func(time.Duration)
	// EDIFACT are the parse settings dry-runs use (those of this build's
	// parse stage).
	EDIFACT parse.Config
	// Agreements are the partner profiles dry-runs enforce, as the parse
	// stage does (partner.Registry; nil: none).
	Agreements parse.Agreements
	// Ledger is the interchange ledger dry-runs ask (nil: the verdict says
	// a duplicate would be acked).
	Ledger parse.Ledger
	// EditsBucket is the KV bucket mapping an edited original to its
	// edited version (default dlq-edits).
	EditsBucket string
	// PayloadBucket is the claim check's object store, where payloads
	// too large for the server are (default edihub-payloads).
	PayloadBucket string
	// ReplaysBucket is the KV bucket of replay batches (default
	// dlq-replays).
	ReplaysBucket string
	// Replicas of the edits bucket when ops creates it (0: 1; nats.replicas
	// on a cluster).
	Replicas int
	// Grants records forced replays in the interchange ledger
	// (*ledger.KVStore); nil refuses --force.
	Grants Granter
	// Replayed, if set, is told of each message replayed (after its copy
	// was stored and audited and the message removed), with the kind of
	// stream it came from: the CLI notes a quarantined message's replay on
	// its forensic ticket.
	Replayed func(ctx context.Context, kind string, it ReplayItem)
	Logger   zerolog.Logger
}

// Granter records that an operator forced the replay of ref with a
// payload; the parse stage honours x-replay-force only with a grant.
type Granter interface {
	Grant(ref, payloadSHA256 string) error
}

// NewOps checks the options and fills in defaults.
func NewOps(o OpsOptions) (*Ops, error) {
	if o.JS == nil || o.Auditor == nil {
		return nil, errors.New("ops: a JetStream context and an auditor are required")
	}
	o.Streams.SetDefaults()
	if o.Actor == "" {
		o.Actor = "unknown"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = time.Sleep
	}
	if o.EditsBucket == "" {
		o.EditsBucket = "dlq-edits"
	}
	if o.ReplaysBucket == "" {
		o.ReplaysBucket = "dlq-replays"
	}
	return &Ops{o: o, log: o.Logger.With().Str("component", "ops").Logger()}, nil
}

// WithActor returns a copy of o acting for another person (the API uses
// one per request, named by the token).
func (o *Ops) WithActor(actor string) *Ops {
	c := *o
	c.o.Actor = actor
	c.log = o.log.With().Str("actor", actor).Logger()
	return &c
}

// Actor is who the audit events of o name.
func (o *Ops) Actor() string { return o.o.Actor }

// ErrBadID is returned for an ID that is not STREAM:SEQ of a stream Ops
// manages.
var ErrBadID = wire.ErrBadID

// ParseID reads an ID such as DLQ:1234 (stream names are case-insensitive)
// of the DLQ, PARKING or POISON stream.
func (o *Ops) ParseID(s string) (wire.MsgRef, error) {
	return wire.ParseMsgRef(s, o.o.Streams.DLQ, o.o.Streams.Parking, o.o.Streams.Poison)
}

// Entry is one message of DLQ, PARKING or POISON as listings show it:
// where it is, why it is there, and its headers. Header values are as
// stored (untrusted); renderers escape them.
type Entry struct {
	ID          string    `json:"id"`
	Kind        string    `json:"kind"`
	Stream      string    `json:"stream"`
	Seq         uint64    `json:"seq"`
	Subject     string    `json:"subject"`
	Time        time.Time `json:"time"`
	Size        int       `json:"size"`
	Stage       string    `json:"stage,omitempty"`
	Cause       string    `json:"cause,omitempty"`
	Partner     string    `json:"partner,omitempty"`
	ErrorClass  string    `json:"error_class,omitempty"`
	ErrorMsg    string    `json:"error_msg,omitempty"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	// ErrorCode and ErrorSegment are read from ErrorMsg (ErrorDetail).
	ErrorCode     string `json:"error_code,omitempty"`
	ErrorSegment  string `json:"error_segment,omitempty"`
	OriginalTopic string `json:"original_topic,omitempty"`
	MessageID     string `json:"message_id,omitempty"`
	Attempts      int    `json:"attempts,omitempty"`
	EditedFrom    string `json:"edited_from,omitempty"`
	SupersededBy  string `json:"superseded_by,omitempty"`
	// EditReplayedAs: the edit that supersedes this original was replayed
	// (to INGEST:n); nothing is left to do with the original.
	EditReplayedAs string              `json:"edit_replayed_as,omitempty"`
	Headers        map[string][]string `json:"headers,omitempty"`
}

// Superseded reports whether an edited version replaces e: e itself is
// never replayed then.
func (e Entry) Superseded() bool { return e.SupersededBy != "" }

// entryOf builds an Entry from a stored message's subject and headers.
func (o *Ops) entryOf(stream string, seq uint64, subject string, t time.Time, hdr map[string][]string, size int) Entry {
	// The hub writes its headers in exactly these spellings; a variant in
	// another letter case is a producer's and is never read as the hub's.
	get := func(k string) string {
		if vs := hdr[k]; len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	e := Entry{
		ID: wire.MsgRef{Stream: stream, Seq: seq}.String(), Kind: o.o.Streams.KindOf(stream), Stream: stream, Seq: seq, Subject: subject, Time: t.UTC(), Size: size,
		Stage: get(wire.HdrStage), Cause: get(wire.HdrErrorCause), Partner: get(wire.HdrPartnerID), ErrorClass: get(wire.HdrErrorClass),
		ErrorMsg: get(wire.HdrErrorMsg), Fingerprint: get(wire.HdrFingerprint), OriginalTopic: get(wire.HdrOriginalTopic),
		MessageID: get(wire.HdrMessageID), EditedFrom: get(wire.HdrEditedFrom), Headers: map[string][]string{},
	}
	e.ErrorCode, e.ErrorSegment = ErrorDetail(e.ErrorMsg)
	e.Attempts, _ = strconv.Atoi(get(wire.HdrAttempts))
	if n, err := strconv.Atoi(get(wire.HdrMsgSize)); err == nil {
		e.Size = n
	}
	switch e.Kind {
	case wire.KindDLQ:
		if stage, cause, ok := wire.ParseDLQSubject(subject); ok {
			e.Stage, e.Cause = cmp.Or(e.Stage, stage), cause
		}
	case wire.KindParking:
		if stage, ok := wire.ParseParkingSubject(subject); ok {
			e.Stage = cmp.Or(e.Stage, stage)
		}
	case wire.KindPoison:
		if stage, ok := wire.ParsePoisonSubject(subject); ok {
			e.Stage = cmp.Or(e.Stage, stage)
		}
		e.Cause = cmp.Or(get(wire.HdrPoisonCause), e.Cause)
	}
	if e.Partner == "" {
		e.Partner, _ = wire.PartnerOfTopic(e.OriginalTopic)
	}
	for k, vs := range hdr {
		if k == wire.HdrMsgSize {
			continue
		}
		e.Headers[k] = append([]string(nil), vs...)
	}
	return e
}

// readID reads the stored message id names (ParseID, getMsg); ref is set
// whenever id parses, also when the message is gone.
func (o *Ops) readID(ctx context.Context, id string) (wire.MsgRef, *js.RawStreamMsg, error) {
	ref, err := o.ParseID(id)
	if err != nil {
		return ref, nil, err
	}
	raw, err := o.getMsg(ctx, ref)
	return ref, raw, err
}

// storedEntry is the Entry of the stored message raw, ref.
func (o *Ops) storedEntry(ref wire.MsgRef, raw *js.RawStreamMsg) Entry {
	return o.entryOf(ref.Stream, ref.Seq, raw.Subject, raw.Time, raw.Header, len(raw.Data))
}

// getMsg reads one stored message; a missing one is ErrNotFound with the
// likely reasons.
func (o *Ops) getMsg(ctx context.Context, ref wire.MsgRef) (*js.RawStreamMsg, error) {
	s, err := o.o.JS.Stream(ctx, ref.Stream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", ref.Stream, err)
	}
	m, err := s.GetMsg(ctx, ref.Seq)
	if errors.Is(err, js.ErrMsgNotFound) {
		return nil, fmt.Errorf("%w: %s (replayed, parked, dropped or expired — the audit trail says which)", ErrNotFound, ref)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ref, err)
	}
	return m, nil
}

// ErrNotFound says a message is no longer in its stream.
var ErrNotFound = errors.New("no such message")

func (o *Ops) deleteMsg(ctx context.Context, ref wire.MsgRef, secure bool) error {
	s, err := o.o.JS.Stream(ctx, ref.Stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", ref.Stream, err)
	}
	if secure {
		err = s.SecureDeleteMsg(ctx, ref.Seq)
	} else {
		err = s.DeleteMsg(ctx, ref.Seq)
	}
	if err != nil && !errors.Is(err, js.ErrMsgNotFound) {
		return fmt.Errorf("delete %s: %w", ref, err)
	}
	return nil
}

// audit appends an event for the acting person.
func (o *Ops) audit(ctx context.Context, ev audit.Event, dedupe string) error {
	ev.Actor = o.o.Actor
	ev.Time = o.o.Now().UTC()
	if _, err := o.o.Auditor.Append(ctx, ev, dedupe); err != nil {
		return fmt.Errorf("audit event %s not written: %w", ev.Action, err)
	}
	return nil
}

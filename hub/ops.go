package hub

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

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
	Streams StreamNames // zero fields: defaults
	Auditor *Auditor
	// Actor names the person in audit events (OS user, --actor, or the
	// API token's name).
	Actor string
	// Now and Sleep are the clock of bulk replays; tests inject a fake one
	// so that rate limits are checked without real waiting.
	Now   func() time.Time
	Sleep func(time.Duration)
	// EDIFACT are the parse settings dry-runs use (those of this build's
	// parse stage).
	EDIFACT EDIFACTConfig
	// EditsBucket is the KV bucket mapping an edited original to its
	// edited version (default dlq-edits).
	EditsBucket string
	Logger      zerolog.Logger
}

// NewOps checks the options and fills in defaults.
func NewOps(o OpsOptions) (*Ops, error) {
	if o.JS == nil || o.Auditor == nil {
		return nil, errors.New("ops: a JetStream context and an auditor are required")
	}
	var c Config
	c.Streams = o.Streams
	c.setDefaults()
	o.Streams = c.Streams
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

// Kinds of the streams Ops works on.
const (
	KindDLQ     = "dlq"
	KindParking = "parking"
	KindPoison  = "poison"
)

// MsgRef identifies a message as STREAM:SEQ (DLQ:1234). The sequence is the
// stream's own and never reused, so the ID is stable and printable.
type MsgRef struct {
	Stream string
	Seq    uint64
}

func (r MsgRef) String() string { return r.Stream + ":" + strconv.FormatUint(r.Seq, 10) }

// kvKey is r as a KV key (':' is not allowed there).
func (r MsgRef) kvKey() string { return r.Stream + "." + strconv.FormatUint(r.Seq, 10) }

// ErrBadID is returned for an ID that is not STREAM:SEQ of a stream Ops
// manages.
var ErrBadID = errors.New("bad message ID")

// ParseID reads an ID such as DLQ:1234 (stream names are case-insensitive).
func (o *Ops) ParseID(s string) (MsgRef, error) {
	name, seqStr, ok := strings.Cut(strings.TrimSpace(s), ":")
	seq, err := strconv.ParseUint(seqStr, 10, 64)
	if !ok || err != nil || seq == 0 {
		return MsgRef{}, fmt.Errorf("%w %q: want STREAM:SEQ, e.g. %s:1234", ErrBadID, EscapeLine(s), o.o.Streams.DLQ)
	}
	for _, st := range []string{o.o.Streams.DLQ, o.o.Streams.Parking, o.o.Streams.Poison} {
		if strings.EqualFold(name, st) {
			return MsgRef{Stream: st, Seq: seq}, nil
		}
	}
	return MsgRef{}, fmt.Errorf("%w %q: the stream must be %s, %s or %s", ErrBadID, EscapeLine(s),
		o.o.Streams.DLQ, o.o.Streams.Parking, o.o.Streams.Poison)
}

// kindOf names the role of a stream.
func (o *Ops) kindOf(stream string) string {
	switch stream {
	case o.o.Streams.DLQ:
		return KindDLQ
	case o.o.Streams.Parking:
		return KindParking
	case o.o.Streams.Poison:
		return KindPoison
	}
	return ""
}

func (o *Ops) streamOf(kind string) string {
	switch kind {
	case KindDLQ:
		return o.o.Streams.DLQ
	case KindParking:
		return o.o.Streams.Parking
	case KindPoison:
		return o.o.Streams.Poison
	}
	return ""
}

// Entry is one message of DLQ, PARKING or POISON as listings show it:
// where it is, why it is there, and its headers. Header values are as
// stored (untrusted); renderers escape them.
type Entry struct {
	ID            string              `json:"id"`
	Kind          string              `json:"kind"`
	Stream        string              `json:"stream"`
	Seq           uint64              `json:"seq"`
	Subject       string              `json:"subject"`
	Time          time.Time           `json:"time"`
	Size          int                 `json:"size"`
	Stage         string              `json:"stage,omitempty"`
	Cause         string              `json:"cause,omitempty"`
	Partner       string              `json:"partner,omitempty"`
	ErrorClass    string              `json:"error_class,omitempty"`
	ErrorMsg      string              `json:"error_msg,omitempty"`
	Fingerprint   string              `json:"fingerprint,omitempty"`
	OriginalTopic string              `json:"original_topic,omitempty"`
	MessageID     string              `json:"message_id,omitempty"`
	Attempts      int                 `json:"attempts,omitempty"`
	EditedFrom    string              `json:"edited_from,omitempty"`
	SupersededBy  string              `json:"superseded_by,omitempty"`
	Headers       map[string][]string `json:"headers,omitempty"`
}

// Superseded reports whether an edited version replaces e: e itself is
// never replayed then.
func (e Entry) Superseded() bool { return e.SupersededBy != "" }

// HdrSize is set by JetStream on headers-only deliveries.
const hdrMsgSize = "Nats-Msg-Size"

// Headers Ops adds to the copies it makes.
const (
	HdrReplayedFrom = "x-replayed-from"
	HdrReplayedBy   = "x-replayed-by"
	HdrEditedFrom   = "x-edited-from"
	HdrEditedBy     = "x-edited-by"
	HdrEditedAt     = "x-edited-at"
	HdrParkedFrom   = "x-parked-from"
	HdrParkedBy     = "x-parked-by"
	HdrParkedAt     = "x-parked-at"
)

// entryOf builds an Entry from a stored message's subject and headers.
func (o *Ops) entryOf(stream string, seq uint64, subject string, t time.Time, hdr map[string][]string, size int) Entry {
	get := func(k string) string {
		for hk, vs := range hdr {
			if strings.EqualFold(hk, k) && len(vs) > 0 {
				return vs[0]
			}
		}
		return ""
	}
	e := Entry{
		ID: MsgRef{stream, seq}.String(), Kind: o.kindOf(stream), Stream: stream, Seq: seq, Subject: subject, Time: t.UTC(), Size: size,
		Stage: get(HdrStage), Cause: get(HdrErrorCause), Partner: get(HdrPartnerID), ErrorClass: get(HdrErrorClass),
		ErrorMsg: get(HdrErrorMsg), Fingerprint: get(HdrFingerprint), OriginalTopic: get(HdrOriginalTopic),
		MessageID: get(HdrMessageID), EditedFrom: get(HdrEditedFrom), Headers: map[string][]string{},
	}
	e.Attempts, _ = strconv.Atoi(get(HdrAttempts))
	if n, err := strconv.Atoi(get(hdrMsgSize)); err == nil {
		e.Size = n
	}
	tok := strings.Split(subject, ".")
	switch e.Kind {
	case KindDLQ: // edi.<stage>.dlq.<cause>
		if len(tok) == 4 {
			e.Stage = nonEmpty(e.Stage, tok[1])
			e.Cause = tok[3]
		}
	case KindParking: // edi.<stage>.parking-lot
		if len(tok) == 3 {
			e.Stage = nonEmpty(e.Stage, tok[1])
		}
	case KindPoison: // edi.poison.<stage>
		if len(tok) == 3 {
			e.Stage = nonEmpty(e.Stage, tok[2])
		}
		e.Cause = nonEmpty(get(HdrPoisonCause), e.Cause)
	}
	if e.Partner == "" && strings.HasPrefix(e.OriginalTopic, "edi.ingest.") {
		e.Partner = strings.TrimPrefix(e.OriginalTopic, "edi.ingest.")
	}
	for k, vs := range hdr {
		if k == hdrMsgSize {
			continue
		}
		e.Headers[k] = append([]string(nil), vs...)
	}
	return e
}

// scan calls fn for every message of stream stored at or after since
// (zero: all), in sequence order, through a short-lived pull consumer:
// one round trip per 256 messages instead of one per message. With
// headersOnly the payloads stay on the server.
func scan(ctx context.Context, j js.JetStream, stream string, since time.Time, headersOnly bool, fn func(js.Msg, *js.MsgMetadata) error) error {
	s, err := j.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	cfg := js.ConsumerConfig{
		AckPolicy: js.AckNonePolicy, HeadersOnly: headersOnly, MemoryStorage: true,
		InactiveThreshold: time.Minute, Description: "edihub ops scan", MaxDeliver: 1,
	}
	if !since.IsZero() {
		st := since.UTC()
		cfg.DeliverPolicy, cfg.OptStartTime = js.DeliverByStartTimePolicy, &st
	}
	c, err := s.CreateConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("scan %s: %w", stream, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.DeleteConsumer(dctx, c.CachedInfo().Name)
	}()
	ci, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("scan %s: %w", stream, err)
	}
	pending := ci.NumPending
	for pending > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		// No-wait: the server answers at once with what it has, instead of
		// holding the request until 256 messages arrive.
		batch, err := c.FetchNoWait(int(min(pending, 256)))
		if err != nil {
			return fmt.Errorf("scan %s: %w", stream, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("scan %s: %w", stream, err)
			}
			pending = md.NumPending
			if err := fn(m, md); err != nil {
				return err
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, js.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("scan %s: %w", stream, err)
		}
		if n == 0 {
			break // expired or deleted meanwhile
		}
	}
	return nil
}

// getMsg reads one stored message; a missing one is ErrNotFound with the
// likely reasons.
func (o *Ops) getMsg(ctx context.Context, ref MsgRef) (*js.RawStreamMsg, error) {
	s, err := o.o.JS.Stream(ctx, ref.Stream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", ref.Stream, err)
	}
	m, err := s.GetMsg(ctx, ref.Seq)
	if errors.Is(err, js.ErrMsgNotFound) {
		return nil, fmt.Errorf("%w: %s (replayed, parked, dropped or expired — see 'edihub audit ls')", ErrNotFound, ref)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ref, err)
	}
	return m, nil
}

// ErrNotFound says a message is no longer in its stream.
var ErrNotFound = errors.New("no such message")

func (o *Ops) deleteMsg(ctx context.Context, ref MsgRef, secure bool) error {
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
func (o *Ops) audit(ctx context.Context, ev AuditEvent, dedupe string) error {
	ev.Actor = o.o.Actor
	ev.Time = o.o.Now().UTC()
	if _, err := o.o.Auditor.Append(ctx, ev, dedupe); err != nil {
		return fmt.Errorf("audit event %s not written: %w", ev.Action, err)
	}
	return nil
}

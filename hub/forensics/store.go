package forensics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	ejs "github.com/edihub/edihub/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/wire"
	js "github.com/nats-io/nats.go/jetstream"
)

// ErrNotFound is returned for a poison ID, report or ticket that does not
// exist (the CLI maps it to exit code 1).
var ErrNotFound = errors.New("not found")

// Store is the persistent side of forensics: reports and payloads
// in the Object Store bucket, tickets in the KV bucket, the POISON stream
// for what is quarantined. The worker and the CLI share it.
type Store struct {
	js  js.JetStream
	cfg Config
	obj js.ObjectStore
	kv  js.KeyValue
	now func() time.Time
}

// OpenStore opens the buckets; with create it makes them first
// (the worker), without it a missing bucket means "nothing analysed yet"
// and reads return empty lists (the CLI must not create state).
func OpenStore(ctx context.Context, j js.JetStream, cfg Config, create bool) (*Store, error) {
	cfg.SetDefaults()
	s := &Store{js: j, cfg: cfg, now: time.Now}
	var err error
	if create {
		s.obj, err = ejs.EnsureObjectStore(ctx, j, js.ObjectStoreConfig{
			Bucket: cfg.Bucket, Description: "edihub forensic reports and quarantined payloads", Storage: js.FileStorage,
			Replicas: max(cfg.Replicas, 1)})
		if err != nil {
			return nil, fmt.Errorf("object store %s: %w", cfg.Bucket, err)
		}
		s.kv, err = ejs.EnsureKeyValue(ctx, j, js.KeyValueConfig{
			Bucket: cfg.TicketBucket, Description: "edihub analysis tickets", History: 16, Storage: js.FileStorage,
			Replicas: max(cfg.Replicas, 1)})
		if err != nil {
			return nil, fmt.Errorf("kv bucket %s: %w", cfg.TicketBucket, err)
		}
		return s, nil
	}
	if s.obj, err = j.ObjectStore(ctx, cfg.Bucket); err != nil && !errors.Is(err, js.ErrBucketNotFound) {
		return nil, fmt.Errorf("object store %s: %w", cfg.Bucket, err)
	}
	if s.kv, err = j.KeyValue(ctx, cfg.TicketBucket); err != nil && !errors.Is(err, js.ErrBucketNotFound) {
		return nil, fmt.Errorf("kv bucket %s: %w", cfg.TicketBucket, err)
	}
	return s, nil
}

// save stores payload, ticket and report, in that order: the report is
// the last thing written, so a report always has its payload and ticket.
// Every write is keyed by the original message, so a crash and a second
// analysis of the same POISON message overwrite the same objects instead
// of adding new ones; a different POISON message claiming the same origin
// never overwrites them (see claimKey).
func (s *Store) save(ctx context.Context, r *Report, payload []byte, actor string, reanalyse bool) (*Ticket, error) {
	if s.obj == nil || s.kv == nil {
		return nil, errors.New("forensic buckets are not open")
	}
	if err := s.claimKey(ctx, r); err != nil {
		return nil, err
	}
	meta := map[string]string{"poison-id": r.ID, "poison-seq": strconv.FormatUint(r.PoisonSeq, 10), "partner": r.Partner, "stage": r.Stage}
	if _, err := s.obj.Put(ctx, js.ObjectMeta{Name: r.PayloadObject, Description: "quarantined payload, byte for byte", Metadata: meta}, bytes.NewReader(payload)); err != nil {
		return nil, fmt.Errorf("store payload %s: %w", r.PayloadObject, err)
	}
	t, err := s.upsertTicket(ctx, r, actor, reanalyse)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	meta = map[string]string{"poison-id": r.ID, "poison-seq": strconv.FormatUint(r.PoisonSeq, 10), "partner": r.Partner,
		"stage": r.Stage, "outcome": string(r.Sandbox.Outcome), "ticket": r.Ticket}
	if !r.QuarantinedAt.IsZero() {
		meta["quarantined-at"] = r.QuarantinedAt.UTC().Format(time.RFC3339Nano)
	}
	if _, err := s.obj.Put(ctx, js.ObjectMeta{Name: ReportObject(r.Key), Description: "forensic report", Metadata: meta}, bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("store report %s: %w", ReportObject(r.Key), err)
	}
	return t, nil
}

// claimKey keeps r off objects that belong to another POISON message: the
// origin headers (x-original-*) are whatever the publisher wrote, so a
// second message claiming an analysed origin, forged or not, is stored
// under <key>/poison-<seq> with its own ticket, and the report says so.
func (s *Store) claimKey(ctx context.Context, r *Report) error {
	own := strconv.FormatUint(r.PoisonSeq, 10)
	for _, name := range []string{ReportObject(r.Key), r.PayloadObject} {
		info, err := s.obj.GetInfo(ctx, name)
		if errors.Is(err, js.ErrObjectNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("check %s: %w", name, err)
		}
		if other := info.Metadata["poison-seq"]; other != own {
			first := r.Key
			r.Key = collisionKey(first, r.PoisonSeq)
			r.PayloadObject, r.Ticket = PayloadObject(r.Key), ticketKey(r.Key)
			r.Collision = fmt.Sprintf("%s was already analysed for POISON:%s; this message claims the same origin and is stored under %s instead",
				first, other, r.Key)
			return nil
		}
	}
	return nil
}

// collisionKey is where a second POISON message for an analysed origin goes.
func collisionKey(key string, poisonSeq uint64) string {
	return key + "/poison-" + strconv.FormatUint(poisonSeq, 10)
}

// upsertTicket opens the ticket, or on a repeated analysis updates its
// cause and summary but keeps its state and notes: an acked ticket stays
// acked when the worker re-runs after a crash.
func (s *Store) upsertTicket(ctx context.Context, r *Report, actor string, reanalyse bool) (*Ticket, error) {
	for try := 0; try < 10; try++ {
		now := s.now().UTC()
		t, rev, err := s.getTicket(ctx, r.Ticket)
		switch {
		case errors.Is(err, ErrNotFound):
			t = &Ticket{ID: r.Ticket, State: TicketOpen, PoisonID: r.ID, ReportKey: r.Key, Partner: r.Partner, Stage: r.Stage,
				Cause: string(r.Sandbox.Outcome), Summary: r.Sandbox.Summary, Created: now, Updated: now,
				Notes: []TicketNote{{At: now, Actor: actor, Action: "open", Text: r.Sandbox.Summary}}}
			b, _ := json.Marshal(t)
			if _, err := s.kv.Create(ctx, t.ID, b); err != nil {
				if errors.Is(err, js.ErrKeyExists) {
					continue
				}
				return nil, fmt.Errorf("open ticket %s: %w", t.ID, err)
			}
			return t, nil
		case err != nil:
			return nil, err
		}
		if t.Cause == string(r.Sandbox.Outcome) && t.Summary == r.Sandbox.Summary && !reanalyse {
			return t, nil // the same analysis again after a crash: nothing to change
		}
		t.Cause, t.Summary, t.Updated, t.PoisonID = string(r.Sandbox.Outcome), r.Sandbox.Summary, now, r.ID
		if reanalyse {
			t.Notes = append(t.Notes, TicketNote{At: now, Actor: actor, Action: "reanalyse", Text: r.Sandbox.Summary})
		}
		b, _ := json.Marshal(t)
		if _, err := s.kv.Update(ctx, t.ID, b, rev); err != nil {
			continue // someone else changed it: read again
		}
		return t, nil
	}
	return nil, fmt.Errorf("update ticket %s: lost the race 10 times", r.Ticket)
}

func (s *Store) getTicket(ctx context.Context, id string) (*Ticket, uint64, error) {
	if s.kv == nil {
		return nil, 0, fmt.Errorf("ticket %s: %w", id, ErrNotFound)
	}
	e, err := s.kv.Get(ctx, id)
	if errors.Is(err, js.ErrKeyNotFound) {
		return nil, 0, fmt.Errorf("ticket %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read ticket %s: %w", id, err)
	}
	var t Ticket
	if err := json.Unmarshal(e.Value(), &t); err != nil {
		return nil, 0, fmt.Errorf("ticket %s is not a ticket: %w", id, err)
	}
	return &t, e.Revision(), nil
}

// Ticket returns the ticket for a poison ID, a report key or a ticket ID.
func (s *Store) Ticket(ctx context.Context, id string) (*Ticket, error) {
	tid, err := s.ticketID(ctx, id)
	if err != nil {
		return nil, err
	}
	t, _, err := s.getTicket(ctx, tid)
	return t, err
}

func (s *Store) ticketID(ctx context.Context, id string) (string, error) {
	if strings.HasPrefix(id, "T-") {
		return id, nil
	}
	r, err := s.Report(ctx, id)
	if err != nil {
		return "", err
	}
	return r.Ticket, nil
}

// TransitionTicket moves a ticket: "ack" (open → acked) or "close" (open
// or acked → closed), with a note, and appends the audit event. The audit
// event is written before the ticket changes: a crash between the two
// leaves an audited intent, never an unaudited change.
func (s *Store) TransitionTicket(ctx context.Context, id, action, actor, note string, auditor *audit.Auditor) (*Ticket, error) {
	tid, err := s.ticketID(ctx, id)
	if err != nil {
		return nil, err
	}
	for try := 0; try < 10; try++ {
		t, rev, err := s.getTicket(ctx, tid)
		if err != nil {
			return nil, err
		}
		var to string
		switch {
		case action == "ack" && t.State == TicketOpen:
			to = TicketAcked
		case action == "close" && t.State != TicketClosed:
			to = TicketClosed
		case action != "ack" && action != "close":
			return nil, fmt.Errorf("unknown ticket action %q (ack, close)", action)
		default:
			return nil, fmt.Errorf("ticket %s is %s: cannot %s it: %w", t.ID, t.State, action, ErrInvalidTransition)
		}
		now := s.now().UTC()
		if auditor != nil {
			_, err := auditor.Append(ctx, audit.Event{Actor: actor, Action: "ticket-" + action, IDs: []string{t.PoisonID, t.ID},
				Reason: note, Details: map[string]string{"from": t.State, "to": to, "report": t.ReportKey, "cause": t.Cause}}, "")
			if err != nil {
				return nil, fmt.Errorf("audit: %w", err)
			}
		}
		t.Notes = append(t.Notes, TicketNote{At: now, Actor: actor, Action: action, Text: note})
		t.State, t.Updated = to, now
		b, _ := json.Marshal(t)
		if _, err := s.kv.Update(ctx, t.ID, b, rev); err != nil {
			continue
		}
		return t, nil
	}
	return nil, fmt.Errorf("ticket %s: lost the update race 10 times", tid)
}

// ErrInvalidTransition: the ticket is not in a state the action applies to.
var ErrInvalidTransition = errors.New("invalid transition")

// Report returns the stored report for POISON:<seq>, a report key
// (INGEST/42) or a ticket ID. A poison ID is resolved through the POISON
// stream's headers, or, if the copy has aged out, through the reports'
// metadata.
func (s *Store) Report(ctx context.Context, id string) (*Report, error) {
	if s.obj == nil {
		return nil, fmt.Errorf("report %s: %w (no analysis has run yet)", id, ErrNotFound)
	}
	key := id
	switch {
	case strings.HasPrefix(id, "T-"):
		t, _, err := s.getTicket(ctx, id)
		if err != nil {
			return nil, err
		}
		key = t.ReportKey
	case !strings.Contains(id, "/"):
		seq, err := wire.ParsePoisonID(id)
		if err != nil {
			return nil, err
		}
		if key, err = s.keyOfPoison(ctx, seq); err != nil {
			return nil, err
		}
	}
	b, err := s.obj.GetBytes(ctx, ReportObject(key))
	if errors.Is(err, js.ErrObjectNotFound) {
		return nil, fmt.Errorf("report for %s: %w (not analysed yet?)", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read report %s: %w", key, err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("report %s is not a report: %w", key, err)
	}
	return &r, nil
}

func (s *Store) keyOfPoison(ctx context.Context, seq uint64) (string, error) {
	want := strconv.FormatUint(seq, 10)
	if st, err := s.js.Stream(ctx, s.cfg.PoisonStream); err == nil {
		if m, err := st.GetMsg(ctx, seq); err == nil {
			key := reportFromPoison(s.cfg.PoisonStream, seq, m.Subject, m.Header, nil).Key
			if info, err := s.obj.GetInfo(ctx, ReportObject(key)); err == nil && info.Metadata["poison-seq"] != want {
				key = collisionKey(key, seq) // another message had the key first
			}
			return key, nil
		}
	}
	infos, err := s.obj.List(ctx)
	if err != nil && !errors.Is(err, js.ErrNoObjectsFound) {
		return "", fmt.Errorf("list reports: %w", err)
	}
	for _, in := range infos {
		if strings.HasSuffix(in.Name, "/report.json") && in.Metadata["poison-seq"] == want {
			return strings.TrimSuffix(in.Name, "/report.json"), nil
		}
	}
	return "", fmt.Errorf("%s: %w in %s nor in the reports", wire.PoisonID(seq), ErrNotFound, s.cfg.PoisonStream)
}

// Payload returns the stored payload of a report.
func (s *Store) Payload(ctx context.Context, r *Report) ([]byte, error) {
	b, err := s.obj.GetBytes(ctx, r.PayloadObject)
	if err != nil {
		return nil, fmt.Errorf("read payload %s: %w", r.PayloadObject, err)
	}
	return b, nil
}

// PoisonEntry is one line of `edihub poison ls`: a quarantined message
// joined with its report and ticket, if any.
type PoisonEntry struct {
	ID            string    `json:"id"`
	Key           string    `json:"key,omitempty"`
	Partner       string    `json:"partner"`
	Stage         string    `json:"stage"`
	PoisonCause   string    `json:"poison_cause,omitempty"`
	QuarantinedAt time.Time `json:"quarantined_at"`
	Bytes         int       `json:"bytes"`
	Outcome       string    `json:"outcome"` // "pending" until analysed
	Ticket        string    `json:"ticket,omitempty"`
	TicketState   string    `json:"ticket_state,omitempty"`
	InStream      bool      `json:"in_stream"` // false: the copy left POISON (replayed, dropped or aged out); the report remains
	// ReplayedAs is where `dlq replay --allow-poison` sent the copy
	// (INGEST:n), from the ticket's notes; empty if it was not replayed.
	ReplayedAs string `json:"replayed_as,omitempty"`
}

// List returns every quarantined message still in the poison stream and
// every report whose copy has aged out, oldest first.
func (s *Store) List(ctx context.Context) ([]PoisonEntry, error) {
	bySeq := map[string]*PoisonEntry{} // joined by poison sequence: two messages may claim one origin
	var out []*PoisonEntry
	err := s.scanPoison(ctx, func(seq uint64, subject string, r *Report, size int) {
		e := &PoisonEntry{ID: r.ID, Key: r.Key, Partner: r.Partner, Stage: r.Stage, PoisonCause: r.PoisonCause,
			QuarantinedAt: r.QuarantinedAt, Bytes: size, Outcome: "pending", InStream: true}
		bySeq[strconv.FormatUint(seq, 10)] = e
		out = append(out, e)
	})
	if err != nil {
		return nil, err
	}
	if s.obj != nil {
		infos, err := s.obj.List(ctx)
		if err != nil && !errors.Is(err, js.ErrNoObjectsFound) {
			return nil, fmt.Errorf("list reports: %w", err)
		}
		sizes := map[string]int{} // payload object name -> bytes
		for _, in := range infos {
			sizes[in.Name] = int(in.Size)
		}
		for _, in := range infos {
			key, ok := strings.CutSuffix(in.Name, "/report.json")
			if !ok {
				continue
			}
			e := bySeq[in.Metadata["poison-seq"]]
			if e == nil {
				seq, _ := strconv.ParseUint(in.Metadata["poison-seq"], 10, 64)
				e = &PoisonEntry{ID: wire.PoisonID(seq), Partner: in.Metadata["partner"], Stage: in.Metadata["stage"]}
				e.QuarantinedAt, e.Bytes = s.quarantinedAt(ctx, in), sizes[PayloadObject(key)]
				bySeq[in.Metadata["poison-seq"]] = e
				out = append(out, e)
			}
			e.Key, e.Outcome, e.Ticket = key, in.Metadata["outcome"], in.Metadata["ticket"]
		}
	}
	res := make([]PoisonEntry, 0, len(out))
	for _, e := range out {
		if e.Ticket != "" {
			if t, _, err := s.getTicket(ctx, e.Ticket); err == nil {
				e.TicketState = t.State
				if !e.InStream {
					e.ReplayedAs = t.replayedAs()
				}
			}
		}
		res = append(res, *e)
	}
	sort.SliceStable(res, func(i, j int) bool {
		a, _ := wire.ParsePoisonID(res[i].ID)
		b, _ := wire.ParsePoisonID(res[j].ID)
		return a < b
	})
	return res, nil
}

// quarantinedAt is when a report's message was quarantined: from the
// report's metadata, or (reports stored before it was kept there) from the
// report itself.
func (s *Store) quarantinedAt(ctx context.Context, in *js.ObjectInfo) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, in.Metadata["quarantined-at"]); err == nil {
		return t
	}
	b, err := s.obj.GetBytes(ctx, in.Name)
	if err != nil {
		return time.Time{}
	}
	var r Report
	if json.Unmarshal(b, &r) != nil {
		return time.Time{}
	}
	return r.QuarantinedAt
}

// NoteReplayed records on the ticket of a quarantined message that an
// operator replayed it (newID: where the copy went), so that listings say
// "replayed" rather than "aged out". A message never analysed has no
// ticket: nothing to note.
func (s *Store) NoteReplayed(ctx context.Context, poisonID, newID, actor string) error {
	if s.kv == nil || s.obj == nil {
		return nil
	}
	tid, err := s.ticketID(ctx, poisonID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for range 10 {
		t, rev, err := s.getTicket(ctx, tid)
		if err != nil {
			return err
		}
		if t.replayedAs() == newID {
			return nil
		}
		now := s.now().UTC()
		t.Notes = append(t.Notes, TicketNote{At: now, Actor: actor, Action: TicketReplayed, Text: newID})
		t.Updated = now
		b, _ := json.Marshal(t)
		if _, err := s.kv.Update(ctx, t.ID, b, rev); err != nil {
			continue
		}
		return nil
	}
	return fmt.Errorf("ticket %s: lost the update race 10 times", tid)
}

// scanPoison reads the poison stream's headers (not the payloads).
func (s *Store) scanPoison(ctx context.Context, f func(seq uint64, subject string, r *Report, size int)) error {
	err := ejs.Scan(ctx, s.js, s.cfg.PoisonStream, &ejs.ScanOptions{HeadersOnly: true}, func(m js.Msg, meta *js.MsgMetadata) error {
		size, _ := strconv.Atoi(m.Headers().Get(wire.HdrMsgSize))
		f(meta.Sequence.Stream, m.Subject(), reportFromPoison(s.cfg.PoisonStream, meta.Sequence.Stream, m.Subject(), m.Headers(), nil), size)
		return nil
	})
	if errors.Is(err, js.ErrStreamNotFound) {
		return nil
	}
	return err
}

package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ejs "github.com/edihub/edihub/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
)

// ErrReasonRequired refuses a drop (or a forced replay) without a reason:
// the audit trail must say why evidence was destroyed.
var ErrReasonRequired = errors.New("a reason is required")

// ShowResult is one message with its payload: headers, the payload byte for
// byte (base64 in JSON), its hash, and the payload one segment a line,
// escaped for a terminal.
type ShowResult struct {
	Entry         Entry       `json:"entry"`
	Payload       []byte      `json:"payload"`
	PayloadSHA256 string      `json:"payload_sha256"`
	Segments      SegmentView `json:"segments"`
	// EditGone: the edit that supersedes this original is no longer in
	// its stream (replayed, dropped or expired); there is nothing to link.
	EditGone bool        `json:"edit_gone,omitempty"`
	Text     PayloadText `json:"text"`
	// Referenced: the message's body is a reference (an upload, a payload
	// stored aside); Payload is the payload it names, fetched and checked
	// (or, when that failed, the body, with Referenced.Error).
	Referenced *Referenced `json:"referenced,omitempty"`
	// Replay is what became of this message's replay, or of its edit's
	// (the replay batch's item with a live verdict), if one was kept.
	Replay      *ReplayItem `json:"replay,omitempty"`
	ReplayBatch string      `json:"replay_batch,omitempty"`
}

// ShowOptions bound what Show renders (0: no limit).
type ShowOptions struct {
	MaxSegments int
	MaxRest     int
}

// Show reads one message with its payload and audits that someone saw it:
// payloads may hold personal data.
func (o *Ops) Show(ctx context.Context, id string, so ShowOptions) (*ShowResult, error) {
	ref, raw, err := o.readID(ctx, id)
	if errors.Is(err, ErrNotFound) {
		// Gone from its stream: a kept replay batch still says where it went.
		if it, batch, rerr := o.replayOf(ctx, ref); rerr == nil && it != nil {
			return nil, fmt.Errorf("%w: %s was replayed as %s in batch %s: %s", ErrNotFound, ref, it.NewID, batch, replayWords(*it))
		}
	}
	if err != nil {
		return nil, err
	}
	e := o.storedEntry(ref, raw)
	if next, replayedAs, _, err := o.editRecord(ctx, ref); err == nil {
		e.SupersededBy, e.EditReplayedAs = next, replayedAs
	}
	data, referenced, _ := o.realPayload(ctx, raw, e.Partner) // a failed fetch shows the body, and says why
	res := &ShowResult{Entry: e, Payload: data, PayloadSHA256: audit.PayloadHash(data),
		Segments: Segments(data, so.MaxSegments, so.MaxRest), Text: TextOf(data), Referenced: referenced}
	res.EditGone = o.editGone(ctx, e.SupersededBy)
	if e.EditReplayedAs != "" {
		// The original was replayed by its own ID (through its edit) or
		// its edit by the edit's.
		for _, id := range []string{ref.String(), e.SupersededBy} {
			r, err := o.ParseID(id)
			if err != nil {
				continue
			}
			it, batch, err := o.replayOf(ctx, r)
			if err != nil {
				o.log.Warn().Err(err).Msg("replay batch of an edited original not read")
			}
			if it != nil {
				res.Replay, res.ReplayBatch = it, batch
				break
			}
		}
	}
	if err := o.audit(ctx, audit.Event{Action: "show", IDs: []string{ref.String()}, PayloadBefore: res.PayloadSHA256}, ""); err != nil {
		return nil, err // no audit, no payload
	}
	return res, nil
}

// ActionResult is the outcome of one park, drop or edit.
type ActionResult struct {
	ID     string `json:"id"`
	NewID  string `json:"new_id,omitempty"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	SHA256 string `json:"payload_sha256,omitempty"`
}

// Park moves dead letters or poison to edi.<stage>.parking-lot, where they
// wait (no age limit) until a person decides. Copy, wait for the ack,
// audit, then delete: a crash in between leaves a copy the server's dedupe
// recognises when the park is run again.
func (o *Ops) Park(ctx context.Context, ids []string, reason string) ([]ActionResult, error) {
	refs, err := o.parseIDs(ids)
	if err != nil {
		return nil, err
	}
	return o.parkRefs(ctx, refs, reason, nil), nil
}

// parkRefs parks each message, with details added to its audit event.
func (o *Ops) parkRefs(ctx context.Context, refs []wire.MsgRef, reason string, details map[string]string) []ActionResult {
	out := make([]ActionResult, 0, len(refs))
	for _, ref := range refs {
		r := ActionResult{ID: ref.String()}
		newID, sum, err := o.parkOne(ctx, ref, reason, details)
		r.NewID, r.SHA256, r.OK = newID, sum, err == nil
		if err != nil {
			r.Error = err.Error()
		}
		out = append(out, r)
	}
	return out
}

func (o *Ops) parkOne(ctx context.Context, ref wire.MsgRef, reason string, details map[string]string) (string, string, error) {
	if o.o.Streams.KindOf(ref.Stream) == wire.KindParking {
		return "", "", fmt.Errorf("%s is parked already", ref)
	}
	raw, err := o.getMsg(ctx, ref)
	if err != nil {
		return "", "", err
	}
	e := o.storedEntry(ref, raw)
	if e.Stage == "" {
		return "", "", fmt.Errorf("%s: no stage in its subject or x-stage header; cannot pick a parking lot", ref)
	}
	m := &nats.Msg{Subject: wire.ParkingSubject(e.Stage), Header: ejs.CopyHeaders(raw.Header), Data: raw.Data}
	m.Header.Set(wire.HdrParkedFrom, ref.String())
	m.Header.Set(wire.HdrParkedBy, escape.Header(o.o.Actor))
	m.Header.Set(wire.HdrParkedAt, o.o.Now().UTC().Format(time.RFC3339Nano))
	if e.Cause != "" && m.Header.Get(wire.HdrErrorCause) == "" {
		m.Header.Set(wire.HdrErrorCause, e.Cause)
	}
	ack, err := o.o.JS.PublishMsg(ctx, m, js.WithMsgID("park:"+ref.String()))
	if err != nil {
		return "", "", fmt.Errorf("park %s: copy to %s: %w", ref, m.Subject, err)
	}
	newRef := wire.MsgRef{Stream: ack.Stream, Seq: ack.Sequence}
	sum := audit.PayloadHash(raw.Data)
	if err := o.moveEditLinks(ctx, ref, newRef, e.EditedFrom); err != nil {
		return newRef.String(), sum, err
	}
	if err := o.audit(ctx, audit.Event{Action: "park", IDs: []string{ref.String(), newRef.String()}, Reason: reason,
		PayloadBefore: sum, PayloadAfter: sum, Details: withDetails(map[string]string{"to": m.Subject}, details)}, "audit:park:"+ref.String()); err != nil {
		return newRef.String(), sum, err
	}
	return newRef.String(), sum, o.deleteMsg(ctx, ref, false)
}

// moveEditLinks keeps the edit map pointing at live messages when one
// moves: an edited copy's original now points to the new place, and an
// original's own edit link moves with it.
func (o *Ops) moveEditLinks(ctx context.Context, from, to wire.MsgRef, editedFrom string) error {
	next, _, err := o.editOf(ctx, from)
	if err != nil {
		return err
	}
	if editedFrom == "" && next == "" {
		return nil
	}
	kv, err := o.editsKV(ctx, true)
	if err != nil {
		return err
	}
	if editedFrom != "" {
		if orig, err := o.ParseID(editedFrom); err == nil {
			if _, err := kv.Put(ctx, orig.KVKey(), []byte(to.String())); err != nil {
				return fmt.Errorf("update edit link of %s: %w", orig, err)
			}
		}
	}
	if next != "" {
		if _, err := kv.Put(ctx, to.KVKey(), []byte(next)); err != nil {
			return fmt.Errorf("move edit link of %s: %w", from, err)
		}
		_ = kv.Delete(ctx, from.KVKey())
	}
	return nil
}

// Drop deletes messages for good (secure delete: the payload is
// overwritten on disk) and audits the payload's hash and the reason.
func (o *Ops) Drop(ctx context.Context, ids []string, reason string) ([]ActionResult, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, ErrReasonRequired
	}
	refs, err := o.parseIDs(ids)
	if err != nil {
		return nil, err
	}
	return o.dropRefs(ctx, refs, reason, nil), nil
}

// dropRefs drops each message, with details added to its audit event.
func (o *Ops) dropRefs(ctx context.Context, refs []wire.MsgRef, reason string, details map[string]string) []ActionResult {
	out := make([]ActionResult, 0, len(refs))
	for _, ref := range refs {
		r := ActionResult{ID: ref.String()}
		err := func() error {
			raw, err := o.getMsg(ctx, ref)
			if err != nil {
				return err
			}
			r.SHA256 = audit.PayloadHash(raw.Data)
			e := o.storedEntry(ref, raw)
			// Audit first: a drop that is not in the trail must not happen.
			if err := o.audit(ctx, audit.Event{Action: "drop", IDs: []string{ref.String()}, Reason: reason, PayloadBefore: r.SHA256,
				Details: withDetails(map[string]string{"subject": raw.Subject, "partner": e.Partner, "cause": e.Cause, "message_id": e.MessageID}, details)},
				"audit:drop:"+ref.String()); err != nil {
				return err
			}
			return o.deleteMsg(ctx, ref, true)
		}()
		r.OK = err == nil
		if err != nil {
			r.Error = err.Error()
		}
		out = append(out, r)
	}
	return out
}

// ErrNoChange says an edit left the payload as it was.
var ErrNoChange = errors.New("the edited payload is the same as the original; nothing stored")

// EditResult names both versions: the original stays (evidence), the
// edited one is what a replay of either ID sends.
type EditResult struct {
	Original string `json:"original"`
	Edited   string `json:"edited"`
	Before   string `json:"payload_sha256_before"`
	After    string `json:"payload_sha256_after"`
}

// Edit stores payload as a new message beside the original, in the same
// stream and subject, with x-edited-from, and records original → edited in
// the edits bucket; from then on only the edited version is replayed.
func (o *Ops) Edit(ctx context.Context, id string, payload []byte, reason string) (*EditResult, error) {
	if len(bytes.TrimSpace(payload)) == 0 {
		return nil, ErrEmptyEdit
	}
	ref, raw, err := o.readID(ctx, id)
	if err != nil {
		return nil, err
	}
	e := o.storedEntry(ref, raw)
	// the payload a reference names; its body when that is gone (an
	// upload never taken: the operator supplies the bytes)
	current, _, _ := o.realPayload(ctx, raw, e.Partner)
	if bytes.Equal(current, payload) {
		return nil, ErrNoChange
	}
	kv, err := o.editsKV(ctx, true)
	if err != nil {
		return nil, err
	}
	// Claim the original first ("pending"), so that a crash after the copy
	// is stored cannot leave two replayable versions.
	var rev uint64
	cur, curRev, err := o.editOf(ctx, ref)
	switch {
	case err != nil:
		return nil, err
	case cur == "":
		rev, err = kv.Create(ctx, ref.KVKey(), []byte(editPending))
	default:
		if cur != editPending {
			if nref, perr := o.ParseID(cur); perr == nil {
				if _, gerr := o.getMsg(ctx, nref); gerr == nil {
					return nil, fmt.Errorf("%s was edited already into %s; edit that one", ref, nref)
				}
			}
		}
		rev, err = kv.Update(ctx, ref.KVKey(), []byte(editPending), curRev)
	}
	if err != nil {
		return nil, fmt.Errorf("claim %s for an edit (someone else may be editing it): %w", ref, err)
	}
	before, after := audit.PayloadHash(current), audit.PayloadHash(payload)
	m := &nats.Msg{Subject: raw.Subject, Header: ejs.CopyHeaders(raw.Header)}
	// over the server's limit: kept as an upload, the edit its reference
	if err := o.setPayload(ctx, m, payload, e.Partner); err != nil {
		return nil, fmt.Errorf("the edited version of %s: %w", ref, err)
	}
	m.Header.Set(wire.HdrEditedFrom, ref.String())
	m.Header.Set(wire.HdrEditedBy, escape.Header(o.o.Actor))
	m.Header.Set(wire.HdrEditedAt, o.o.Now().UTC().Format(time.RFC3339Nano))
	// The edit carries the hub's mark only if the original did: a replay
	// trusts the recorded partner of signed copies alone (see replayOne).
	// A v2 mark vouches for the partner: an older hub's v1 copy gets it
	// only when its original confirms the partner it names.
	keys := o.o.Auditor.Keyring()
	if keys != nil {
		if v, err := audit.CheckCopy(keys, raw.Header, raw.Data); err != nil ||
			v < audit.CopyMACv2 && o.confirmPartner(ctx, raw.Header, e.Partner) != nil {
			keys = nil
		}
	}
	audit.SignCopy(keys, m.Header, m.Data)
	if ttl := raw.Header.Get(wire.HdrTTL); ttl != "" && o.o.Streams.KindOf(ref.Stream) == wire.KindDLQ {
		m.Header.Set(wire.HdrTTL, ttl) // the cause's retention applies to the edit too
	}
	ack, err := o.publishOwnCopy(ctx, m, o.copyMsgID("edit", e.Partner, ref, after), wire.HdrEditedFrom)
	if err != nil {
		return nil, fmt.Errorf("store the edited version of %s: %w", ref, err)
	}
	newRef := wire.MsgRef{Stream: ack.Stream, Seq: ack.Sequence}
	if _, err := kv.Update(ctx, ref.KVKey(), []byte(newRef.String()), rev); err != nil {
		return nil, fmt.Errorf("link %s to its edit %s: %w", ref, newRef, err)
	}
	res := &EditResult{Original: ref.String(), Edited: newRef.String(), Before: before, After: after}
	if err := o.audit(ctx, audit.Event{Action: "edit", IDs: []string{ref.String(), newRef.String()}, Reason: reason,
		PayloadBefore: before, PayloadAfter: after}, "audit:edit:"+ref.String()+":"+newRef.String()); err != nil {
		return res, err
	}
	return res, nil
}

// Payload returns a message's payload for an editor, and audits that
// someone saw it (as Show does), even if the edit is then abandoned.
func (o *Ops) Payload(ctx context.Context, id string) ([]byte, error) {
	ref, raw, err := o.readID(ctx, id)
	if err != nil {
		return nil, err
	}
	e := o.storedEntry(ref, raw)
	// an editor edits the payload, never its reference (the body when the
	// payload is gone, as Show)
	data, _, _ := o.realPayload(ctx, raw, e.Partner)
	if err := o.audit(ctx, audit.Event{Action: "show", IDs: []string{ref.String()}, PayloadBefore: audit.PayloadHash(data),
		Details: map[string]string{"purpose": "edit"}}, ""); err != nil {
		return nil, err
	}
	return data, nil
}

func (o *Ops) parseIDs(ids []string) ([]wire.MsgRef, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: name at least one message ID", ErrBadID)
	}
	refs := make([]wire.MsgRef, 0, len(ids))
	seen := map[wire.MsgRef]bool{}
	for _, id := range ids {
		ref, err := o.ParseID(id)
		if err != nil {
			return nil, err
		}
		if !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

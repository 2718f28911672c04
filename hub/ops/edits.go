package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/edihub/edihub/wire"
	js "github.com/nats-io/nats.go/jetstream"
)

// Edits are tracked in a small KV bucket, original ID → edited ID, so that
// replaying the original (by ID or by filter) replays the edited version
// and never both — the bug that ServicePulse's edit-and-retry shipped with.
// The edited copy also carries x-edited-from, so a scan finds the link even
// if the KV write was lost in a crash.

// editPending marks an edit whose copy may not be stored yet; replays of
// the original refuse until the edit is run again.
const editPending = "pending"

func (o *Ops) editsKV(ctx context.Context, create bool) (js.KeyValue, error) {
	return o.bucket(ctx, "edits", js.KeyValueConfig{
		Bucket: o.o.EditsBucket, Description: "edihub: edited dead letters, original ID -> edited ID",
		History: 1, Storage: js.FileStorage, Replicas: max(1, o.o.Replicas),
	}, create)
}

// edits returns every original ID → edited ID (or "pending"), and for
// the originals whose edit was replayed, original ID → where it went.
func (o *Ops) edits(ctx context.Context) (map[string]string, map[string]string, error) {
	out, replayed := map[string]string{}, map[string]string{}
	kv, err := o.editsKV(ctx, false)
	if err != nil || kv == nil {
		return out, replayed, err
	}
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list edits: %w", err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	for _, k := range keys {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, js.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read edit %s: %w", k, err)
		}
		to, as := splitEdit(string(e.Value()))
		out[wire.RefOfKVKey(k)] = to
		if as != "" {
			replayed[wire.RefOfKVKey(k)] = as
		}
	}
	return out, replayed, nil
}

// editOf returns the edit recorded for ref ("" if none) and its revision.
func (o *Ops) editOf(ctx context.Context, ref wire.MsgRef) (string, uint64, error) {
	to, _, rev, err := o.editRecord(ctx, ref)
	return to, rev, err
}

// editRecord returns the edit recorded for ref, where that edit was
// replayed to if it was ("" if not), and the entry's revision.
func (o *Ops) editRecord(ctx context.Context, ref wire.MsgRef) (to, replayedAs string, rev uint64, err error) {
	kv, err := o.editsKV(ctx, false)
	if err != nil || kv == nil {
		return "", "", 0, err
	}
	e, err := kv.Get(ctx, ref.KVKey())
	if errors.Is(err, js.ErrKeyNotFound) {
		return "", "", 0, nil
	}
	if err != nil {
		return "", "", 0, fmt.Errorf("read edit of %s: %w", ref, err)
	}
	to, replayedAs = splitEdit(string(e.Value()))
	return to, replayedAs, e.Revision(), nil
}

// An edit entry is "<edited ID>", or "<edited ID> replayed-as <new ID>"
// once the edit was replayed (markEditReplayed), or "pending".
const replayedAsWord = " replayed-as "

func splitEdit(v string) (to, replayedAs string) {
	to, replayedAs, _ = strings.Cut(v, replayedAsWord)
	return to, replayedAs
}

// markEditReplayed records on the original's entry that its edit went
// back as newID, so that the original reads "done" rather than "replaying
// sends the edit" once the edit is gone. Only if the entry still points at
// that edit.
func (o *Ops) markEditReplayed(ctx context.Context, orig, edit wire.MsgRef, newID string) error {
	kv, err := o.editsKV(ctx, false)
	if err != nil || kv == nil {
		return err
	}
	e, err := kv.Get(ctx, orig.KVKey())
	if errors.Is(err, js.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read edit of %s: %w", orig, err)
	}
	if to, _ := splitEdit(string(e.Value())); to != edit.String() {
		return nil
	}
	if _, err := kv.Update(ctx, orig.KVKey(), []byte(edit.String()+replayedAsWord+newID), e.Revision()); err != nil {
		return fmt.Errorf("note the replay of %s on %s: %w", edit, orig, err)
	}
	return nil
}

// ErrEditPending says an edit of the message was interrupted.
var ErrEditPending = errors.New("an edit of this message was interrupted; edit it again (or drop it)")

// ErrEditReplayed says the message was edited and the edit was replayed:
// nothing is left to do (the original stays as evidence). The error that
// wraps it is an *EditReplayedError.
var ErrEditReplayed = errors.New("already replayed through its edit")

// EditReplayedError names the edit and where it went.
type EditReplayedError struct{ Original, Edit, ReplayedAs string }

func (e *EditReplayedError) Error() string {
	return fmt.Sprintf("%s was edited into %s, which was replayed as %s: nothing left to replay", e.Original, e.Edit, e.ReplayedAs)
}

func (e *EditReplayedError) Is(target error) bool { return target == ErrEditReplayed }

// ErrSuperseded says the message was edited and its edited version is
// gone; the original is never replayed in its place.
var ErrSuperseded = errors.New("superseded by an edit")

// resolve follows edits from ref to the version to act on: ref itself, or
// the newest edit of it that still exists.
func (o *Ops) resolve(ctx context.Context, ref wire.MsgRef) (wire.MsgRef, error) {
	cur := ref
	for range 32 {
		next, replayedAs, _, err := o.editRecord(ctx, cur)
		if err != nil {
			return cur, err
		}
		switch next {
		case "":
			return cur, nil
		case editPending:
			return cur, fmt.Errorf("%s: %w", cur, ErrEditPending)
		}
		nref, err := o.ParseID(next)
		if err != nil {
			return cur, fmt.Errorf("edit of %s points to %q: %w", cur, next, err)
		}
		if _, err := o.getMsg(ctx, nref); errors.Is(err, ErrNotFound) && replayedAs != "" {
			return cur, &EditReplayedError{Original: cur.String(), Edit: nref.String(), ReplayedAs: replayedAs}
		} else if errors.Is(err, ErrNotFound) {
			return cur, fmt.Errorf("%s was edited into %s, which is no longer stored (replayed, dropped or expired): %w; edit %s again to replay it",
				cur, nref, ErrSuperseded, cur)
		} else if err != nil {
			return cur, err
		}
		cur = nref
	}
	return cur, fmt.Errorf("%s: edit chain longer than 32", ref)
}

// editGone reports whether the edit an original names (its superseded_by)
// is no longer stored, so that a page does not link to a removed version.
func (o *Ops) editGone(ctx context.Context, edit string) bool {
	if edit == "" || edit == editPending {
		return false
	}
	ref, err := o.ParseID(edit)
	if err != nil {
		return true
	}
	_, err = o.getMsg(ctx, ref)
	return errors.Is(err, ErrNotFound)
}

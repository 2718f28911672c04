package ops

import (
	"context"
	"errors"
	"fmt"

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
	kv, err := o.o.JS.KeyValue(ctx, o.o.EditsBucket)
	switch {
	case err == nil:
		return kv, nil
	case errors.Is(err, js.ErrBucketNotFound) && !create:
		return nil, nil // nothing was ever edited
	case !errors.Is(err, js.ErrBucketNotFound):
		return nil, fmt.Errorf("edits bucket %s: %w", o.o.EditsBucket, err)
	}
	kv, err = o.o.JS.CreateOrUpdateKeyValue(ctx, js.KeyValueConfig{
		Bucket: o.o.EditsBucket, Description: "edihub: edited dead letters, original ID -> edited ID",
		History: 1, Storage: js.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("create edits bucket %s: %w", o.o.EditsBucket, err)
	}
	return kv, nil
}

// edits returns every original ID → edited ID (or "pending").
func (o *Ops) edits(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	kv, err := o.editsKV(ctx, false)
	if err != nil || kv == nil {
		return out, err
	}
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list edits: %w", err)
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
			return nil, fmt.Errorf("read edit %s: %w", k, err)
		}
		out[wire.RefOfKVKey(k)] = string(e.Value())
	}
	return out, nil
}

// editOf returns the edit recorded for ref ("" if none) and its revision.
func (o *Ops) editOf(ctx context.Context, ref wire.MsgRef) (string, uint64, error) {
	kv, err := o.editsKV(ctx, false)
	if err != nil || kv == nil {
		return "", 0, err
	}
	e, err := kv.Get(ctx, ref.KVKey())
	if errors.Is(err, js.ErrKeyNotFound) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("read edit of %s: %w", ref, err)
	}
	return string(e.Value()), e.Revision(), nil
}

// ErrEditPending says an edit of the message was interrupted.
var ErrEditPending = errors.New("an edit of this message was interrupted; edit it again (or drop it)")

// ErrSuperseded says the message was edited and its edited version is
// gone; the original is never replayed in its place.
var ErrSuperseded = errors.New("superseded by an edit")

// resolve follows edits from ref to the version to act on: ref itself, or
// the newest edit of it that still exists.
func (o *Ops) resolve(ctx context.Context, ref wire.MsgRef) (wire.MsgRef, error) {
	cur := ref
	for range 32 {
		next, _, err := o.editOf(ctx, cur)
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
		if _, err := o.getMsg(ctx, nref); errors.Is(err, ErrNotFound) {
			return cur, fmt.Errorf("%s was edited into %s, which is no longer stored (replayed, dropped or expired): %w; edit %s again to replay it",
				cur, nref, ErrSuperseded, cur)
		} else if err != nil {
			return cur, err
		}
		cur = nref
	}
	return cur, fmt.Errorf("%s: edit chain longer than 32", ref)
}

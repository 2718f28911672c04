package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/escape"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// A replay batch is one run of Replay that sent something: who, when,
// which messages, and what became of each copy (the streams' verdict,
// client.StreamVerdicts). It is kept in a KV bucket (ReplaysBucket) under
// batch.<id>, and each replayed message under from.<stream>.<seq> points
// to its batch, so that the old ID still says where it went once it has
// left its stream.

// Outcomes of a replayed copy once followed (ReplayItem.Outcome; before
// it is followed, or with no wait, it reads OutcomeReplayed).
const (
	OutcomeParsed       = client.OutcomeParsed
	OutcomeDeadLettered = client.OutcomeDeadLettered
	OutcomeDuplicate    = client.OutcomeDuplicate
	OutcomeQuarantined  = client.OutcomeQuarantined
	// OutcomeNoVerdict: the copy was stored but nothing the hub stored
	// says yet what became of it (still queued, retrying, or the wait was
	// too short); the batch's live tally answers later.
	OutcomeNoVerdict = "no-verdict"
)

// ReplayBatch is one replay run and its live tally.
type ReplayBatch struct {
	ID       string       `json:"id"`
	Time     time.Time    `json:"time"`
	Operator string       `json:"operator"`
	IDs      []string     `json:"ids"`
	Items    []ReplayItem `json:"items"`
	// Tally counts the items by Outcome.
	Tally map[string]int `json:"tally"`
}

// pending: an item whose copy was stored and has no verdict yet.
func pending(it ReplayItem) bool {
	return it.NewID != "" && (it.Outcome == OutcomeReplayed || it.Outcome == OutcomeNoVerdict)
}

func (b *ReplayBatch) count() {
	b.Tally = map[string]int{}
	for _, it := range b.Items {
		b.Tally[it.Outcome]++
	}
}

const (
	batchKeyPrefix = "batch."
	fromKeyPrefix  = "from."
	// maxBatchJSON keeps a batch under the server's default payload
	// limit; a larger one loses its items' error texts.
	maxBatchJSON = 800 << 10
)

func (o *Ops) replaysKV(ctx context.Context, create bool) (js.KeyValue, error) {
	return o.bucket(ctx, "replays", js.KeyValueConfig{
		Bucket: o.o.ReplaysBucket, Description: "edihub: replay batches and their outcomes; replayed ID -> batch",
		History: 1, Storage: js.FileStorage, Replicas: max(1, o.o.Replicas), TTL: replayBatchTTL,
	}, create)
}

// bucket opens the runbook's KV bucket cfg.Bucket (what names it in
// errors). A missing one is made with cfg when create, else it is nil with
// no error (nothing was ever stored in it).
func (o *Ops) bucket(ctx context.Context, what string, cfg js.KeyValueConfig, create bool) (js.KeyValue, error) {
	kv, err := o.o.JS.KeyValue(ctx, cfg.Bucket)
	switch {
	case err == nil:
		return kv, nil
	case errors.Is(err, js.ErrBucketNotFound) && !create:
		return nil, nil
	case !errors.Is(err, js.ErrBucketNotFound):
		return nil, fmt.Errorf("%s bucket %s: %w", what, cfg.Bucket, err)
	}
	kv, err = ejs.EnsureKeyValue(ctx, o.o.JS, cfg)
	if err != nil {
		return nil, fmt.Errorf("create %s bucket %s: %w", what, cfg.Bucket, err)
	}
	return kv, nil
}

// replayBatchTTL is how long a batch is kept (the DLQ's own age limit is
// shorter).
const replayBatchTTL = 90 * 24 * time.Hour

func newBatchID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "R-" + t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// recordBatch stores a new batch of the items of rep that sent a copy
// and points each replayed ID (and edit) at it.
func (o *Ops) recordBatch(ctx context.Context, rep *ReplayReport, at time.Time) (*ReplayBatch, error) {
	b := &ReplayBatch{ID: newBatchID(at), Time: at.UTC(), Operator: o.o.Actor}
	for _, it := range rep.Items {
		if it.Outcome == OutcomeReplayed {
			b.IDs = append(b.IDs, it.ID)
			b.Items = append(b.Items, it)
		}
	}
	if len(b.Items) == 0 {
		return nil, nil
	}
	kv, err := o.replaysKV(ctx, true)
	if err != nil {
		return nil, err
	}
	if err := o.putBatch(ctx, kv, b); err != nil {
		return nil, err
	}
	for _, it := range b.Items {
		for _, id := range []string{it.ID, it.Version} {
			if ref, err := o.ParseID(id); err == nil {
				if _, err := kv.Put(ctx, fromKeyPrefix+ref.KVKey(), []byte(b.ID)); err != nil {
					return b, fmt.Errorf("note %s in replay batch %s: %w", id, b.ID, err)
				}
			}
		}
	}
	return b, nil
}

func (o *Ops) putBatch(ctx context.Context, kv js.KeyValue, b *ReplayBatch) error {
	b.count()
	v, err := json.Marshal(b)
	if err == nil && len(v) > maxBatchJSON {
		c := *b
		c.Items = slices.Clone(b.Items)
		for i := range c.Items {
			c.Items[i].Error, c.Items[i].Detail, c.Items[i].Subjects = "", "", nil
		}
		v, err = json.Marshal(&c)
	}
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, batchKeyPrefix+b.ID, v); err != nil {
		return fmt.Errorf("store replay batch %s: %w", b.ID, err)
	}
	return nil
}

// ErrNoBatch: no replay batch of that id is kept.
var ErrNoBatch = fmt.Errorf("%w: no such replay batch", ErrNotFound)

// follow waits up to d for the streams' verdict on each pending item of
// b and sets its Outcome (OutcomeNoVerdict when nothing was stored by
// then). It reports whether anything changed.
func (o *Ops) follow(ctx context.Context, b *ReplayBatch, d time.Duration) (bool, error) {
	var seqs []uint64
	for _, it := range b.Items {
		if pending(it) {
			if ref, err := wire.ParseMsgRef(it.NewID, o.o.Streams.Ingest); err == nil {
				seqs = append(seqs, ref.Seq)
			}
		}
	}
	if len(seqs) == 0 {
		return false, nil
	}
	got, err := client.WaitVerdicts(ctx, o.o.JS, o.o.Streams, b.Time, seqs, d)
	if err != nil {
		return false, fmt.Errorf("follow replay batch %s: %w", b.ID, err)
	}
	changed := false
	for i := range b.Items {
		it := &b.Items[i]
		if !pending(*it) {
			continue
		}
		ref, err := wire.ParseMsgRef(it.NewID, o.o.Streams.Ingest)
		if err != nil {
			continue
		}
		v, ok := got[ref.Seq]
		if !ok {
			if it.Outcome != OutcomeNoVerdict {
				it.Outcome, changed = OutcomeNoVerdict, true
			}
			continue
		}
		it.Outcome, it.Where, it.Subjects, it.Cause, it.Detail, it.DeadLetter = v.Outcome, v.Where, v.Subjects, v.Cause, v.Detail, v.DeadLetter
		it.Verdict = client.DescribeVerdict(v)
		changed = true
	}
	return changed, nil
}

// FollowReplay waits up to d for what became of the copies rep sent,
// records the batch (rep.Batch) and sets each replayed item's Outcome to
// the streams' verdict. With d 0 the batch is recorded and nothing
// waited for: its items read "replayed" until ReplayBatch is asked.
func (o *Ops) FollowReplay(ctx context.Context, rep *ReplayReport, since time.Time, d time.Duration) error {
	if rep.DryRun {
		return nil
	}
	// An interrupted replay (Ctrl-C) still records what it sent.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	b, err := o.recordBatch(wctx, rep, since)
	if err != nil || b == nil {
		return err
	}
	rep.Batch = b.ID
	if d > 0 && ctx.Err() == nil {
		if _, err := o.follow(ctx, b, d); err != nil {
			return err
		}
		if kv, err := o.replaysKV(wctx, false); err == nil && kv != nil {
			if err := o.putBatch(wctx, kv, b); err != nil {
				return err
			}
		}
	}
	byID := map[string]ReplayItem{}
	for _, it := range b.Items {
		byID[it.ID] = it
	}
	rep.Tally = b.Tally
	for i, it := range rep.Items {
		if f, ok := byID[it.ID]; ok {
			rep.Items[i] = f
		}
	}
	return nil
}

// ReplayBatch returns a batch with its live tally: items without a
// verdict are looked up in the streams again (and the batch updated).
func (o *Ops) ReplayBatch(ctx context.Context, id string) (*ReplayBatch, error) {
	kv, err := o.replaysKV(ctx, false)
	if err != nil {
		return nil, err
	}
	if kv == nil || !strings.HasPrefix(id, "R-") || strings.ContainsAny(id, ".*> ") {
		return nil, fmt.Errorf("%w: %q", ErrNoBatch, id)
	}
	e, err := kv.Get(ctx, batchKeyPrefix+id)
	if errors.Is(err, js.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrNoBatch, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read replay batch %s: %w", id, err)
	}
	var b ReplayBatch
	if err := json.Unmarshal(e.Value(), &b); err != nil {
		return nil, fmt.Errorf("replay batch %s: %w", id, err)
	}
	changed, err := o.follow(ctx, &b, 0)
	if err != nil {
		return nil, err
	}
	b.count()
	if changed {
		if err := o.putBatch(ctx, kv, &b); err != nil {
			o.log.Warn().Err(err).Msg("replay batch's tally not stored")
		}
	}
	return &b, nil
}

// ReplayBatches lists the kept batches, newest first, at most limit (0:
// all), with the tallies last stored (ReplayBatch refreshes one).
func (o *Ops) ReplayBatches(ctx context.Context, limit int) ([]ReplayBatch, error) {
	kv, err := o.replaysKV(ctx, false)
	if err != nil || kv == nil {
		return []ReplayBatch{}, err
	}
	lister, err := kv.ListKeys(ctx, js.MetaOnly())
	if err != nil {
		return nil, fmt.Errorf("list replay batches: %w", err)
	}
	var ids []string
	for k := range lister.Keys() {
		if id, ok := strings.CutPrefix(k, batchKeyPrefix); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids) // R-<time>-…: oldest first
	slices.Reverse(ids)
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
	}
	out := make([]ReplayBatch, 0, len(ids))
	for _, id := range ids {
		e, err := kv.Get(ctx, batchKeyPrefix+id)
		if errors.Is(err, js.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read replay batch %s: %w", id, err)
		}
		var b ReplayBatch
		if json.Unmarshal(e.Value(), &b) == nil {
			out = append(out, b)
		}
	}
	return out, nil
}

// replayOf is the replay of ref (its item, with a live verdict), if a
// kept batch replayed it.
func (o *Ops) replayOf(ctx context.Context, ref wire.MsgRef) (*ReplayItem, string, error) {
	kv, err := o.replaysKV(ctx, false)
	if err != nil || kv == nil {
		return nil, "", err
	}
	e, err := kv.Get(ctx, fromKeyPrefix+ref.KVKey())
	if errors.Is(err, js.ErrKeyNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read replay of %s: %w", ref, err)
	}
	b, err := o.ReplayBatch(ctx, string(e.Value()))
	if err != nil {
		return nil, "", err
	}
	for _, it := range b.Items {
		if it.ID == ref.String() || it.Version == ref.String() {
			return &it, b.ID, nil
		}
	}
	return nil, "", nil
}

// replayWords says what became of a replayed copy, in words (escaped).
func replayWords(it ReplayItem) string {
	switch it.Outcome {
	case OutcomeReplayed, OutcomeNoVerdict:
		return "no verdict yet"
	case OutcomeDeadLettered:
		return "replayed → " + it.Where + " (dead-lettered again, cause " + escape.Line(it.Cause) + ")"
	}
	return it.Verdict
}

// ReplayDone reports whether a replay is done with: its copy parsed.
func ReplayDone(it *ReplayItem) bool { return it != nil && it.Outcome == OutcomeParsed }

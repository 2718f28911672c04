package ops

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/edihub/edihub/wire"
)

// BulkRequest names what a park or drop of several messages acts on: IDs
// or a filter (never both), with a replay's guards: a cap (Max), a dry run
// that changes nothing, and a reason for the audit trail (required with a
// filter, and for every drop).
type BulkRequest struct {
	IDs    []string `json:"ids,omitempty"`
	Filter *Filter  `json:"filter,omitempty"`
	// Max caps how many are acted on in one run (0: DefaultReplayMax);
	// there is no unlimited.
	Max    int    `json:"max,omitempty"`
	DryRun bool   `json:"dry_run,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// BulkReport is the outcome of ParkMatching or DropMatching. In a dry run
// Done counts what would be done and a result's Error says why one would
// not.
type BulkReport struct {
	Action  string         `json:"action"` // park or drop
	DryRun  bool           `json:"dry_run"`
	Filter  string         `json:"filter,omitempty"`
	Matched int            `json:"matched"`
	Left    int            `json:"left"` // matched but over Max: run again
	Done    int            `json:"done"`
	Failed  int            `json:"failed"`
	Results []ActionResult `json:"results"`
}

// ParkMatching parks what req names, as Park does for each.
func (o *Ops) ParkMatching(ctx context.Context, req BulkRequest) (*BulkReport, error) {
	return o.bulk(ctx, "park", req)
}

// DropMatching drops what req names, as Drop does for each.
func (o *Ops) DropMatching(ctx context.Context, req BulkRequest) (*BulkReport, error) {
	return o.bulk(ctx, "drop", req)
}

func (o *Ops) checkBulk(action string, req *BulkRequest) error {
	if (len(req.IDs) == 0) == (req.Filter == nil) {
		return BadRequest("name message IDs or a filter, not both and not neither")
	}
	if req.Filter != nil && req.Filter.IsZero() {
		return BadRequest("a filter that selects everything is refused; name a kind, stage, cause, partner, error class, fingerprint, code, segment or since")
	}
	if (req.Filter != nil || action == "drop") && strings.TrimSpace(req.Reason) == "" {
		return fmt.Errorf("%w: %s of what a filter selects (and every drop) needs one", ErrReasonRequired, action)
	}
	if req.Max == 0 {
		req.Max = DefaultReplayMax
	}
	if req.Max < 0 {
		return BadRequest("max %d: want a positive number (there is no unlimited)", req.Max)
	}
	if len(req.IDs) > req.Max {
		return BadRequest("%d IDs named but max is %d; raise the maximum to act on them all", len(req.IDs), req.Max)
	}
	return nil
}

func (o *Ops) bulk(ctx context.Context, action string, req BulkRequest) (*BulkReport, error) {
	if err := o.checkBulk(action, &req); err != nil {
		return nil, err
	}
	rep := &BulkReport{Action: action, DryRun: req.DryRun}
	var details map[string]string
	if req.Filter != nil {
		f := *req.Filter
		if len(f.Kinds) == 0 {
			// As a replay: parked and quarantined messages are acted on by
			// a filter only when it names their kind.
			f.Kinds = []string{wire.KindDLQ}
		}
		f.Superseded = false
		rep.Filter = f.String()
		details = map[string]string{"filter": rep.Filter}
		req.Filter = &f
	}
	refs, matched, overMax, err := o.targets(ctx, req.Filter, req.IDs, req.Max)
	if err != nil {
		return nil, err
	}
	rep.Matched, rep.Left = matched, overMax
	for i, ref := range refs {
		if ctx.Err() != nil {
			rep.Left += len(refs) - i
			break
		}
		var r ActionResult
		switch {
		case req.DryRun:
			r = o.bulkDryRun(ctx, action, ref)
		case action == "park":
			r = o.parkRefs(ctx, []wire.MsgRef{ref}, req.Reason, details)[0]
		default:
			r = o.dropRefs(ctx, []wire.MsgRef{ref}, req.Reason, details)[0]
		}
		if r.OK {
			rep.Done++
		} else {
			rep.Failed++
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

// bulkDryRun says whether one park or drop would go ahead: the message is
// there, and a park has a stage to pick the parking lot by and is not
// parked already. It changes and audits nothing.
func (o *Ops) bulkDryRun(ctx context.Context, action string, ref wire.MsgRef) ActionResult {
	r := ActionResult{ID: ref.String()}
	raw, err := o.getMsg(ctx, ref)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	e := o.storedEntry(ref, raw)
	switch {
	case action == "park" && e.Kind == wire.KindParking:
		r.Error = ref.String() + " is parked already"
	case action == "park" && e.Stage == "":
		r.Error = ref.String() + ": no stage in its subject or x-stage header; cannot pick a parking lot"
	default:
		r.OK = true
	}
	return r
}

// withDetails adds extra to an event's details (extra never overrides).
func withDetails(d, extra map[string]string) map[string]string {
	for k, v := range extra {
		if _, ok := d[k]; !ok {
			d[k] = v
		}
	}
	return d
}

// targets is what a replay or a bulk action acts on: the messages f
// matches, oldest first, at most max of them (overMax: how many more
// matched), or without f the IDs named.
func (o *Ops) targets(ctx context.Context, f *Filter, ids []string, max int) (refs []wire.MsgRef, matched, overMax int, err error) {
	if f == nil {
		refs, err = o.parseIDs(ids)
		return refs, len(refs), 0, err
	}
	entries, err := o.Inspect(ctx, *f)
	if err != nil {
		return nil, 0, 0, err
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Time.Before(entries[j].Time) })
	for i, e := range entries {
		if i == max {
			return refs, len(entries), len(entries) - i, nil
		}
		refs = append(refs, wire.MsgRef{Stream: e.Stream, Seq: e.Seq})
	}
	return refs, len(entries), 0, nil
}

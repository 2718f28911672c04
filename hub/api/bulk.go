package api

import (
	"net/http"
	"strings"

	"github.com/edihub/edihub/hub/ops"
)

// maxBulkIDs bounds one bulk park or drop (a group action names at most
// this many IDs; run it again for the rest).
const maxBulkIDs = 1000

type bulkBody struct {
	IDs    []string `json:"ids,omitempty"`
	Filter string   `json:"filter,omitempty"` // key=value,... as --filter
	Max    int      `json:"max,omitempty"`
	DryRun bool     `json:"dry_run,omitempty"`
	Reason string   `json:"reason"`
}

// bulk parks or drops IDs (a failure group) or what a filter selects,
// with the guards of a replay (ops.BulkRequest): a reason, a cap and a
// dry run. A dry run needs only the read role; it changes nothing.
func (a *api) bulk(w http.ResponseWriter, r *http.Request, act func(o *ops.Ops, req ops.BulkRequest) (*ops.BulkReport, error)) {
	var b bulkBody
	if !decode(w, r, maxAPIBody, &b) {
		return
	}
	if !b.DryRun {
		if !a.allowWrite(w, r) {
			return
		}
		a.log.Info().Str("actor", caller(r).name).Str("method", r.Method).Str("path", r.URL.Path).Msg("api write")
	}
	if len(b.IDs) > maxBulkIDs || b.Max > maxBulkIDs {
		writeJSONError(w, http.StatusBadRequest, "ids, max: at most 1000 messages a request")
		return
	}
	if strings.TrimSpace(b.Reason) == "" {
		fail(w, ops.ErrReasonRequired)
		return
	}
	req := ops.BulkRequest{IDs: b.IDs, Max: b.Max, DryRun: b.DryRun, Reason: b.Reason}
	if b.Filter != "" {
		f, err := ops.ParseFilter(b.Filter)
		if err != nil {
			fail(w, ops.BadRequest("filter: %s", err.Error()))
			return
		}
		req.Filter = &f
	} else if req.Max == 0 {
		req.Max = len(b.IDs) // named IDs are their own cap
	}
	res, err := act(a.opsFor(r), req)
	if err != nil {
		fail(w, err)
		return
	}
	status := http.StatusOK
	if res.Failed > 0 {
		status = http.StatusMultiStatus
	}
	writeJSON(w, status, res)
}

// parkBulk parks several messages (a failure group) with a reason.
func (a *api) parkBulk(w http.ResponseWriter, r *http.Request) {
	a.bulk(w, r, func(o *ops.Ops, req ops.BulkRequest) (*ops.BulkReport, error) {
		return o.ParkMatching(r.Context(), req)
	})
}

// dropBulk drops several messages with a reason (required).
func (a *api) dropBulk(w http.ResponseWriter, r *http.Request) {
	a.bulk(w, r, func(o *ops.Ops, req ops.BulkRequest) (*ops.BulkReport, error) {
		return o.DropMatching(r.Context(), req)
	})
}

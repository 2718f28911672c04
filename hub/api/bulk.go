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
	IDs    []string `json:"ids"`
	Reason string   `json:"reason"`
}

// BulkResult is the outcome of a park or drop of several messages.
type BulkResult struct {
	Done    int                `json:"done"`
	Failed  int                `json:"failed"`
	Results []ops.ActionResult `json:"results"`
}

func (a *api) bulk(w http.ResponseWriter, r *http.Request, act func(o *ops.Ops, ids []string, reason string) ([]ops.ActionResult, error)) {
	var b bulkBody
	if !decode(w, r, maxAPIBody, &b) {
		return
	}
	if len(b.IDs) == 0 || len(b.IDs) > maxBulkIDs {
		writeJSONError(w, http.StatusBadRequest, "ids: name 1 to 1000 messages")
		return
	}
	if strings.TrimSpace(b.Reason) == "" {
		fail(w, ops.ErrReasonRequired)
		return
	}
	res, err := act(a.opsFor(r), b.IDs, b.Reason)
	if err != nil {
		fail(w, err)
		return
	}
	out := BulkResult{Results: res}
	for _, x := range res {
		if x.OK {
			out.Done++
		} else {
			out.Failed++
		}
	}
	status := http.StatusOK
	if out.Failed > 0 {
		status = http.StatusMultiStatus
	}
	writeJSON(w, status, out)
}

// parkBulk parks several messages (a failure group) with a reason.
func (a *api) parkBulk(w http.ResponseWriter, r *http.Request) {
	a.bulk(w, r, func(o *ops.Ops, ids []string, reason string) ([]ops.ActionResult, error) {
		return o.Park(r.Context(), ids, reason)
	})
}

// dropBulk drops several messages with a reason (required).
func (a *api) dropBulk(w http.ResponseWriter, r *http.Request) {
	a.bulk(w, r, func(o *ops.Ops, ids []string, reason string) ([]ops.ActionResult, error) {
		return o.Drop(r.Context(), ids, reason)
	})
}

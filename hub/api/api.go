package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/ops"
	"github.com/rs/zerolog"
)

// Prefix is where New's handler expects to be mounted.
const Prefix = "/api/v1/"

// Request body limits: an edit carries a whole interchange (base64).
const (
	maxAPIBody     = 1 << 20
	maxAPIEditBody = 64 << 20
)

type api struct {
	ops      *ops.Ops
	tokens   []apiToken
	log      zerolog.Logger
	opt      Options
	sessions *sessions
	logins   *loginLimiter
	cache    *entryCache // nil without Options.JS
	memoMu   sync.Mutex
	memo     map[string]overviewMemo // by chart window
	lists    listMemo
}

type apiToken struct {
	name string
	sum  [32]byte
	role string
}

type ctxKey struct{}

func caller(r *http.Request) *apiToken { t, _ := r.Context().Value(ctxKey{}).(*apiToken); return t }

// opsFor acts as the token's owner.
func (a *api) opsFor(r *http.Request) *ops.Ops { return a.ops.WithActor(caller(r).name) }

func (a *api) allowWrite(w http.ResponseWriter, r *http.Request) bool {
	if caller(r).role != RoleOperator {
		writeJSONError(w, http.StatusForbidden, "token "+caller(r).name+" has the read role; this needs an operator token")
		return false
	}
	return true
}

func (a *api) write(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.allowWrite(w, r) {
			a.log.Info().Str("actor", caller(r).name).Str("method", r.Method).Str("path", r.URL.Path).Msg("api write")
			h(w, r)
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// C1 and bidi controls as \uXXXX: a client that prints a value (curl
	// in a terminal) shows no control sequence.
	enc := json.NewEncoder(escape.JSONWriter(w))
	enc.SetEscapeHTML(true) // a console may put values into HTML
	_ = enc.Encode(v)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	// Text, not Line: errors quote input escaped already (escape once).
	writeJSON(w, status, map[string]string{"error": escape.Text(msg)})
}

// fail maps ops errors to HTTP statuses.
func fail(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, ops.ErrBadID), errors.Is(err, ops.ErrBadRequest), errors.Is(err, ops.ErrReasonRequired), errors.Is(err, ops.ErrNoChange),
		errors.Is(err, audit.ErrBadAnchor):
		status = http.StatusBadRequest
	case errors.Is(err, ops.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, ops.ErrEditPending), errors.Is(err, ops.ErrSuperseded):
		status = http.StatusConflict
	}
	writeJSONError(w, status, err.Error())
}

func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) { // an empty body is an empty request
		writeJSONError(w, http.StatusBadRequest, "request body: "+err.Error())
		return false
	}
	return true
}

func (a *api) filterOf(r *http.Request) (ops.Filter, error) {
	var f ops.Filter
	q := r.URL.Query()
	for _, k := range []string{"kind", "stage", "cause", "partner", "error_class", "fingerprint", "error_code", "error_segment", "since"} {
		if v := q.Get(k); v != "" {
			if err := f.Set(k, v); err != nil {
				return f, ops.BadRequest("%s", err.Error())
			}
		}
	}
	f.Superseded = q.Get("superseded") == "true"
	return f, nil
}

func (a *api) list(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	switch view := r.URL.Query().Get("view"); view {
	case "", "summary":
		s, err := a.ops.List(ctx)
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, s)
	case "messages", "groups":
		f, err := a.filterOf(r)
		if err != nil {
			fail(w, err)
			return
		}
		pg, err := pageOf(r)
		if err != nil {
			fail(w, err)
			return
		}
		if pg.limit > 0 && a.cache != nil {
			paged := a.pagedMessages
			if view == "groups" {
				paged = a.pagedGroups
			}
			out, err := paged(ctx, f, pg)
			if err != nil {
				fail(w, err)
				return
			}
			writeJSON(w, http.StatusOK, out)
			return
		}
		entries, err := a.ops.Inspect(ctx, f) // unpaged: read the streams, as the CLI does
		if err != nil {
			fail(w, err)
			return
		}
		if view == "groups" {
			writeJSON(w, http.StatusOK, pg.groups(ops.GroupFailures(entries)))
			return
		}
		writeJSON(w, http.StatusOK, pg.messages(entries))
	default:
		writeJSONError(w, http.StatusBadRequest, "view: want summary, messages or groups")
	}
}

func (a *api) show(w http.ResponseWriter, r *http.Request) {
	res, err := a.opsFor(r).Show(r.Context(), r.PathValue("id"), ops.ShowOptions{MaxSegments: 10000, MaxRest: 1 << 20})
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

type replayBody struct {
	IDs         []string `json:"ids,omitempty"`
	Filter      string   `json:"filter,omitempty"`
	To          string   `json:"to,omitempty"`
	Max         int      `json:"max,omitempty"`
	Rate        float64  `json:"rate,omitempty"`
	DryRun      bool     `json:"dry_run,omitempty"`
	Force       bool     `json:"force,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	AllowPoison bool     `json:"allow_poison,omitempty"`
	// Outcome is how long to wait for what became of the copies ("5s",
	// the default; "0s": don't wait), at most maxOutcomeWait.
	Outcome string `json:"outcome,omitempty"`
}

// Replay waits: a few seconds by default, as `edihub dlq replay` does;
// never longer than a request should hang.
const (
	defaultOutcomeWait = 5 * time.Second
	maxOutcomeWait     = time.Minute
)

func (a *api) replay(w http.ResponseWriter, r *http.Request, b replayBody) {
	if !b.DryRun && !a.allowWrite(w, r) {
		return
	}
	if b.DryRun && b.AllowPoison {
		// A dry-run parses in this process: never run quarantined poison
		// inside the hub. The sandbox analyses it in a capped child.
		writeJSONError(w, http.StatusBadRequest, "dry-runs of poison are not run inside the hub; use the sandbox or the forensic report")
		return
	}
	req := ops.ReplayRequest{IDs: b.IDs, To: b.To, Max: b.Max, Rate: b.Rate, DryRun: b.DryRun, Force: b.Force, Reason: b.Reason, AllowPoison: b.AllowPoison,
		Outcome: defaultOutcomeWait}
	if b.Outcome != "" {
		d, err := time.ParseDuration(b.Outcome)
		if err != nil || d < 0 || d > maxOutcomeWait {
			fail(w, ops.BadRequest("outcome %q: want a duration from 0s (don't wait) to %v", b.Outcome, maxOutcomeWait))
			return
		}
		req.Outcome = d
	}
	if b.Filter != "" {
		f, err := ops.ParseFilter(b.Filter)
		if err != nil {
			fail(w, ops.BadRequest("%s", err.Error()))
			return
		}
		req.Filter = &f
	}
	if !b.DryRun {
		a.log.Info().Str("actor", caller(r).name).Str("path", r.URL.Path).Msg("api replay")
	}
	rep, err := a.opsFor(r).Replay(r.Context(), req)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// replays lists the replay batches, newest first (limit=N, default 50).
func (a *api) replays(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeJSONError(w, http.StatusBadRequest, "limit: want a positive number")
			return
		}
		limit = n
	}
	bs, err := a.ops.ReplayBatches(r.Context(), limit)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"replays": bs})
}

// replayBatch is one batch with its live tally.
func (a *api) replayBatch(w http.ResponseWriter, r *http.Request) {
	b, err := a.ops.ReplayBatch(r.Context(), r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (a *api) replayBulk(w http.ResponseWriter, r *http.Request) {
	var b replayBody
	if decode(w, r, maxAPIBody, &b) {
		a.replay(w, r, b)
	}
}

func (a *api) replayOne(w http.ResponseWriter, r *http.Request) {
	var b replayBody
	if !decode(w, r, maxAPIBody, &b) {
		return
	}
	if len(b.IDs) > 0 || b.Filter != "" {
		writeJSONError(w, http.StatusBadRequest, "ids and filter belong to POST /api/v1/dlq/replay")
		return
	}
	b.IDs = []string{r.PathValue("id")}
	a.replay(w, r, b)
}

type reasonBody struct {
	Reason string `json:"reason"`
}

func (a *api) park(w http.ResponseWriter, r *http.Request) {
	var b reasonBody
	if !decode(w, r, maxAPIBody, &b) {
		return
	}
	a.results(w, func() ([]ops.ActionResult, error) {
		return a.opsFor(r).Park(r.Context(), []string{r.PathValue("id")}, b.Reason)
	})
}

func (a *api) drop(w http.ResponseWriter, r *http.Request) {
	var b reasonBody
	if !decode(w, r, maxAPIBody, &b) {
		return
	}
	a.results(w, func() ([]ops.ActionResult, error) {
		return a.opsFor(r).Drop(r.Context(), []string{r.PathValue("id")}, b.Reason)
	})
}

// results answers one park or drop: 200 when done, else the error's status.
func (a *api) results(w http.ResponseWriter, f func() ([]ops.ActionResult, error)) {
	res, err := f()
	if err != nil {
		fail(w, err)
		return
	}
	if len(res) == 1 && !res[0].OK {
		status := http.StatusInternalServerError
		if strings.Contains(res[0].Error, ops.ErrNotFound.Error()) {
			status = http.StatusNotFound
		}
		writeJSON(w, status, res[0])
		return
	}
	writeJSON(w, http.StatusOK, res[0])
}

type editBody struct {
	Payload []byte  `json:"payload,omitempty"` // base64 in JSON: the bytes as they are
	Text    *string `json:"text,omitempty"`    // or the edited text, stored in the charset its UNB declares
	Reason  string  `json:"reason,omitempty"`
}

func (a *api) edit(w http.ResponseWriter, r *http.Request) {
	var b editBody
	if !decode(w, r, maxAPIEditBody, &b) {
		return
	}
	if (len(b.Payload) == 0) == (b.Text == nil || *b.Text == "") {
		writeJSONError(w, http.StatusBadRequest, "give the edited payload as payload (base64 bytes) or text, one of them")
		return
	}
	var res *ops.EditResult
	var err error
	if b.Text != nil && *b.Text != "" {
		res, err = a.opsFor(r).EditText(r.Context(), r.PathValue("id"), *b.Text, b.Reason)
	} else {
		res, err = a.opsFor(r).Edit(r.Context(), r.PathValue("id"), b.Payload, b.Reason)
	}
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (a *api) auditList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since time.Duration
	if v := q.Get("since"); v != "" {
		d, err := ops.ParseSince(v)
		if err != nil {
			fail(w, ops.BadRequest("%s", err.Error()))
			return
		}
		since = d
	}
	limit := 1000
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeJSONError(w, http.StatusBadRequest, "limit: want a positive number")
			return
		}
		limit = n
	}
	f := ops.AuditFilter{Since: since, Actor: q.Get("actor"), Action: q.Get("action"), Message: q.Get("message"), Human: q.Get("human") == "true",
		All: q.Get("all") == "true"}
	evs, err := a.ops.AuditList(r.Context(), f, limit)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": evs})
}

func (a *api) auditVerify(w http.ResponseWriter, r *http.Request) {
	v, err := a.ops.AuditVerify(r.Context(), r.URL.Query().Get("anchor"))
	if err != nil {
		fail(w, err)
		return
	}
	status := http.StatusOK
	if !v.OK {
		status = http.StatusConflict
	}
	writeJSON(w, status, v)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/ops"
)

// One signer: the CLI appends an audit event only with the hub's key.
// Without it, the actions that the hub's API offers (show, replay, park,
// drop) are asked of the hub over HTTP with an operator token, and the
// hub performs, audits and signs them; anything else is refused with the
// fix (refuseUnsigned).

// envToken is the operator token of the hub's API.
const (
	envToken  = "EDIHUB_TOKEN"
	envAPIURL = "EDIHUB_API"
)

// apiFlags say where the hub's API is and which token acts.
type apiFlags struct{ url, tokenFile string }

func (a *apiFlags) register(fs *flag.FlagSet, e *env) {
	fs.StringVar(&a.url, "api", nonEmptyStr(e.getenv(envAPIURL), "http://127.0.0.1:8080"),
		"the hub's HTTP API, used when there is no audit key here (default $"+envAPIURL+")")
	fs.StringVar(&a.tokenFile, "token-file", "", "`file` whose first line is an operator token of the hub's API (instead of $"+envToken+")")
}

// token is --token-file's first line, else $EDIHUB_TOKEN ("" for none).
func (a *apiFlags) token(e *env) (string, error) {
	if a.tokenFile == "" {
		return strings.TrimSpace(e.getenv(envToken)), nil
	}
	b, err := os.ReadFile(a.tokenFile)
	if err != nil {
		return "", usageErr("--token-file: %v", err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	if tok = strings.TrimSpace(tok); tok == "" {
		return "", usageErr("--token-file %s: the first line is empty", escape.Line(a.tokenFile))
	}
	return tok, nil
}

// refuseUnsigned is the refusal of an action without the audit key, with
// the exact fix; viaAPI says whether a token would do.
func refuseUnsigned(keyErr error, viaAPI bool) error {
	fix := "run it with the hub's --data DIR (the folder holding audit.key) or set $" + "EDIHUB_AUDIT_KEY"
	if viaAPI {
		fix += ", or set $" + envToken + " (or --token-file FILE) to an operator token of the hub's API, and the hub does it and signs it (--api URL, default http://127.0.0.1:8080)"
	} else {
		fix += " (or do it in the web console)"
	}
	return usageErr("%s: this command writes an audit event and the CLI never writes one unsigned (audit verify would report the chain broken). Fix: %s",
		escape.Line(keyErr.Error()), fix)
}

// runbook is what the actions call: the library with the key, or the
// hub's API without it.
type runbook interface {
	Show(ctx context.Context, id string, so ops.ShowOptions) (*ops.ShowResult, error)
	Replay(ctx context.Context, req ops.ReplayRequest) (*ops.ReplayReport, error)
	Park(ctx context.Context, ids []string, reason string) ([]ops.ActionResult, error)
	Drop(ctx context.Context, ids []string, reason string) ([]ops.ActionResult, error)
	ParkMatching(ctx context.Context, req ops.BulkRequest) (*ops.BulkReport, error)
	DropMatching(ctx context.Context, req ops.BulkRequest) (*ops.BulkReport, error)
}

// hubAPI is the hub's HTTP API acting for an operator token.
type hubAPI struct {
	base, token string
	hc          *http.Client
}

func newHubAPI(raw, token string) (*hubAPI, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageErr("--api %q: want the hub's HTTP address, e.g. http://127.0.0.1:8080", escape.Line(raw))
	}
	if u.User != nil {
		return nil, usageErr("--api: credentials in the URL are refused; use $%s or --token-file", envToken)
	}
	return &hubAPI{base: strings.TrimSuffix(u.String(), "/"), token: token, hc: &http.Client{}}, nil
}

// apiError is an error status the API answered with.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// Is maps API statuses onto the runbook's errors, so opsErr gives the
// same exit codes as the library.
func (e *apiError) Is(target error) bool {
	switch e.status {
	case http.StatusBadRequest:
		return target == ops.ErrBadRequest
	case http.StatusNotFound:
		return target == ops.ErrNotFound
	}
	return false
}

func (h *hubAPI) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.hc.Do(req)
	if err != nil {
		return unreachableErr(fmt.Errorf("the hub's API at %s: %v (is serve running with api.tokens? --api names its address)", h.base, err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("the hub's API: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		var e struct{ Error string }
		_ = json.Unmarshal(b, &e)
		return usageErr("the hub's API refused the token (%d: %s): set $%s or --token-file to an operator token of api.tokens",
			resp.StatusCode, escape.Line(e.Error), envToken)
	case resp.StatusCode >= 300 && resp.StatusCode != http.StatusMultiStatus:
		var e struct{ Error string }
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
		return &apiError{status: resp.StatusCode, msg: e.Error}
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("the hub's API answered %s %s with something else than its JSON: %w", method, path, err)
	}
	return nil
}

func (h *hubAPI) Show(ctx context.Context, id string, _ ops.ShowOptions) (*ops.ShowResult, error) {
	var res ops.ShowResult
	if err := h.call(ctx, http.MethodGet, "/api/v1/dlq/"+url.PathEscape(id), nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (h *hubAPI) Replay(ctx context.Context, req ops.ReplayRequest) (*ops.ReplayReport, error) {
	body := map[string]any{"ids": req.IDs, "to": req.To, "max": req.Max, "rate": req.Rate, "dry_run": req.DryRun,
		"force": req.Force, "reason": req.Reason, "allow_poison": req.AllowPoison, "outcome": req.Outcome.String()}
	if req.Filter != nil {
		body["filter"] = req.Filter.String()
	}
	var rep ops.ReplayReport
	if err := h.call(ctx, http.MethodPost, "/api/v1/dlq/replay", body, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

func (h *hubAPI) Park(ctx context.Context, ids []string, reason string) ([]ops.ActionResult, error) {
	return h.each(ctx, "park", ids, reason)
}

func (h *hubAPI) Drop(ctx context.Context, ids []string, reason string) ([]ops.ActionResult, error) {
	return h.each(ctx, "drop", ids, reason)
}

// each parks or drops one message a request, as the library reports
// them: a failed one is a result, not an error.
func (h *hubAPI) each(ctx context.Context, verb string, ids []string, reason string) ([]ops.ActionResult, error) {
	out := make([]ops.ActionResult, 0, len(ids))
	for _, id := range ids {
		var r ops.ActionResult
		err := h.call(ctx, http.MethodPost, "/api/v1/dlq/"+url.PathEscape(id)+"/"+verb, map[string]string{"reason": reason}, &r)
		var ae *apiError
		switch {
		case errors.As(err, &ae) && ae.status != http.StatusBadRequest:
			r = ops.ActionResult{ID: id, Error: ae.msg}
		case err != nil:
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ParkMatching and DropMatching go to the API's bulk routes, which keep
// the library's guards (reason, cap, dry run).
func (h *hubAPI) ParkMatching(ctx context.Context, req ops.BulkRequest) (*ops.BulkReport, error) {
	return h.bulk(ctx, "park", req)
}

func (h *hubAPI) DropMatching(ctx context.Context, req ops.BulkRequest) (*ops.BulkReport, error) {
	return h.bulk(ctx, "drop", req)
}

func (h *hubAPI) bulk(ctx context.Context, verb string, req ops.BulkRequest) (*ops.BulkReport, error) {
	body := map[string]any{"ids": req.IDs, "max": req.Max, "dry_run": req.DryRun, "reason": req.Reason}
	if req.Filter != nil {
		body["filter"] = req.Filter.String()
	}
	var rep ops.BulkReport
	if err := h.call(ctx, http.MethodPost, "/api/v1/dlq/"+verb, body, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

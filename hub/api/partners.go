package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/edihub/edihub/hub"
)

// pauses binds the bulkhead's pause bucket; nil store (no error): the hub
// never paused anyone.
func (a *api) pauses(w http.ResponseWriter, r *http.Request) (*hub.PauseStore, bool) {
	if a.opt.PauseBucket == "" || a.opt.JS == nil {
		writeJSONError(w, http.StatusNotFound, "no pause bucket here (the bulkhead is not configured for this API)")
		return nil, false
	}
	s, err := hub.BindPauses(r.Context(), a.opt.JS, a.opt.PauseBucket)
	if err != nil {
		fail(w, err)
		return nil, false
	}
	return s, true
}

// pausedPartners is edihub partner paused.
func (a *api) pausedPartners(w http.ResponseWriter, r *http.Request) {
	s, ok := a.pauses(w, r)
	if !ok {
		return
	}
	ps, err := s.List(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"paused": ps})
}

// resumePartner is edihub partner resume ID --reason, audited under the
// caller's name.
func (a *api) resumePartner(w http.ResponseWriter, r *http.Request) {
	var b reasonBody
	if !decode(w, r, maxAPIBody, &b) {
		return
	}
	if strings.TrimSpace(b.Reason) == "" {
		writeJSONError(w, http.StatusBadRequest, "a reason is required: say why the partner may run again")
		return
	}
	s, ok := a.pauses(w, r)
	if !ok {
		return
	}
	p, err := hub.ResumePartner(r.Context(), s, a.opt.Auditor, r.PathValue("id"), caller(r).name, b.Reason)
	if errors.Is(err, hub.ErrNotPaused) {
		writeJSONError(w, http.StatusNotFound, err.Error())
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"resumed": p})
}

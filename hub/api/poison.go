package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/edihub/edihub/hub/forensics"
)

// poisonView is a quarantined message's forensic report and ticket, and
// the report for people as `edihub poison show` prints it (Fields).
type poisonView struct {
	Report *forensics.Report `json:"report"`
	Fields []forensics.Field `json:"fields"`
	Ticket *forensics.Ticket `json:"ticket,omitempty"`
}

// poisonStore opens the forensic buckets for one request: the sandbox
// creates them at its first analysis, which may be after serve started.
func (a *api) poisonStore(w http.ResponseWriter, r *http.Request) *forensics.Store {
	if a.opt.Forensics == nil || a.opt.JS == nil {
		writeJSONError(w, http.StatusNotFound, "no forensic store here (the sandbox is not configured for this API)")
		return nil
	}
	st, err := forensics.OpenStore(r.Context(), a.opt.JS, *a.opt.Forensics, false)
	if err != nil {
		fail(w, err)
		return nil
	}
	return st
}

func forensicsFail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, forensics.ErrNotFound):
		writeJSONError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, forensics.ErrInvalidTransition):
		writeJSONError(w, http.StatusConflict, err.Error())
	default:
		fail(w, err)
	}
}

// poisonShow returns the report and ticket of POISON:<seq> (or a report
// key or ticket ID), as `edihub poison show` prints them.
func (a *api) poisonShow(w http.ResponseWriter, r *http.Request) {
	st := a.poisonStore(w, r)
	if st == nil {
		return
	}
	rep, err := st.Report(r.Context(), r.PathValue("id"))
	if err != nil {
		forensicsFail(w, err)
		return
	}
	t, _ := st.Ticket(r.Context(), rep.Ticket) // a report without a ticket is still worth showing
	writeJSON(w, http.StatusOK, poisonView{Report: rep, Fields: rep.Fields(), Ticket: t})
}

type noteBody struct {
	Note string `json:"note"`
}

// ticket moves a poison ticket on: ack or close, with a note (audited).
func (a *api) ticket(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if action != "ack" && action != "close" {
		writeJSONError(w, http.StatusNotFound, "ticket action: want ack or close")
		return
	}
	var b noteBody
	if !decode(w, r, maxAPIBody, &b) {
		return
	}
	if strings.TrimSpace(b.Note) == "" {
		writeJSONError(w, http.StatusBadRequest, "a note is required: say what you found or did")
		return
	}
	st := a.poisonStore(w, r)
	if st == nil {
		return
	}
	t, err := st.TransitionTicket(r.Context(), r.PathValue("id"), action, caller(r).name, b.Note, a.opt.Auditor)
	if err != nil {
		forensicsFail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

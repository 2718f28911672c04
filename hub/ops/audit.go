package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/wire"
)

// AuditFilter selects audit events; empty fields match everything.
type AuditFilter struct {
	Since   time.Duration `json:"since,omitempty"`
	Actor   string        `json:"actor,omitempty"`
	Action  string        `json:"action,omitempty"`
	Message string        `json:"message,omitempty"` // an ID among the event's IDs (DLQ:12, INGEST:42, T-…)
	// Human keeps the actions people take (show, replay, park, drop,
	// edit, tickets) and leaves out what the hub does by itself.
	Human bool `json:"human,omitempty"`
	// All keeps the read events (ReadActions: page views) that are left
	// out otherwise, unless Action names one.
	All bool `json:"all,omitempty"`
}

// ReadActions are the audit actions of someone looking (a payload shown
// on the CLI, the console or the API): a class of their own, kept apart
// from the actions so that a triage's page views do not bury what was
// done. Every one is recorded (payloads may hold personal data: who saw
// which is evidence, so they are not sampled); listings leave them out
// unless asked (AuditFilter.All, `audit ls --all`, ?all=true).
var ReadActions = map[string]bool{"show": true}

// automaticActions are the audit actions the hub and its worker take on
// their own.
var automaticActions = map[string]bool{"quarantine": true, "duplicate-skipped": true, "forensic-report": true}

func (f AuditFilter) match(r audit.Record) bool {
	ev := r.Event
	if r.Error != "" { // foreign bytes: shown only when nothing narrows the list
		return f.Actor == "" && f.Action == "" && f.Message == "" && !f.Human
	}
	if ReadActions[ev.Action] && !f.All && f.Action != ev.Action {
		return false
	}
	return (f.Actor == "" || ev.Actor == f.Actor) && (f.Action == "" || ev.Action == f.Action) &&
		(f.Message == "" || slices.Contains(ev.IDs, f.Message)) && (!f.Human || !automaticActions[ev.Action])
}

// AuditList returns the newest limit events (0: all) of the hub's AUDIT
// stream that f selects, oldest first.
func (o *Ops) AuditList(ctx context.Context, f AuditFilter, limit int) ([]audit.Record, error) {
	var t time.Time
	if f.Since > 0 {
		t = o.o.Now().Add(-f.Since)
	}
	all, err := audit.Read(ctx, o.o.JS, o.o.Streams.Audit, t, 0)
	if err != nil {
		return nil, err
	}
	if f.Action != "" && !slices.ContainsFunc(all, func(r audit.Record) bool { return r.Event.Action == f.Action }) {
		// A misspelt action matches nothing: say so, unless it is one the
		// trail may yet hold (or one a newer hub wrote).
		if err := checkKnown("action", f.Action, AuditActions); err != nil {
			return nil, err
		}
	}
	out := all[:0]
	for _, r := range all {
		if f.match(r) {
			out = append(out, r)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// AuditVerify is audit.VerifyWith on the hub's AUDIT stream, with the
// Auditor's keyring (none: the hash chain only, and the result says so).
func (o *Ops) AuditVerify(ctx context.Context, anchor string) (audit.Verification, error) {
	return audit.VerifyWith(ctx, o.o.JS, o.o.Streams.Audit, anchor, o.o.Auditor.Keyring())
}

// ErrNotForeign: a sequence given to AcknowledgeForeign is not a foreign
// message of the audit stream (an authentic event, or nothing at all).
var ErrNotForeign = errors.New("not a foreign message of the audit stream")

// AcknowledgeForeign records, with an audited event, that an operator has
// looked at the foreign messages seqs of the audit stream (junk, forged or
// unsigned messages that `audit verify` reports): from then on they are
// listed as acknowledged and no longer make the verdict red. Only messages
// verify reports as foreign may be acknowledged, and the reason is required.
func (o *Ops) AcknowledgeForeign(ctx context.Context, seqs []uint64, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return ErrReasonRequired
	}
	if len(seqs) == 0 {
		return BadRequest("name the sequences of the foreign messages to acknowledge")
	}
	v, err := o.AuditVerify(ctx, "")
	if err != nil {
		return err
	}
	foreign := map[uint64]bool{}
	for _, p := range v.Foreign {
		foreign[p.Seq] = true
	}
	ids := make([]string, 0, len(seqs))
	for _, seq := range seqs {
		if !foreign[seq] {
			return fmt.Errorf("%w: %s:%d", ErrNotForeign, o.o.Streams.Audit, seq)
		}
		ids = append(ids, wire.MsgRef{Stream: o.o.Streams.Audit, Seq: seq}.String())
	}
	return o.audit(ctx, audit.Event{Action: audit.AckForeignAction, IDs: ids, Reason: reason}, "")
}

package ops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ejs "github.com/edihub/edihub/jetstream"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/ubl"
	"github.com/edihub/edihub/wire"
)

// Replay defaults: bulk replays are paced and capped, so that a replay
// never floods a partner's partition or a downstream app (SQS redrive has
// a rate; Kafka has nothing; we have both and a dry-run).
const (
	DefaultReplayRate = 10.0 // messages per second
	DefaultReplayMax  = 100
)

// ReplayRequest names what to replay: IDs, or a filter (never both).
type ReplayRequest struct {
	IDs    []string `json:"ids,omitempty"`
	Filter *Filter  `json:"filter,omitempty"`
	// To overrides the destination (default: the message's
	// x-original-topic, edi.ingest.<partner>).
	To string `json:"to,omitempty"`
	// Rate is messages per second (0: DefaultReplayRate); Max caps how many
	// are replayed in one run (0: DefaultReplayMax). There is no unlimited.
	Rate float64 `json:"rate,omitempty"`
	Max  int     `json:"max,omitempty"`
	// DryRun runs this build's guard and parser on each payload and says
	// what would happen; it publishes, deletes and audits nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Force sets x-replay-force: the interchange ledger does not stop an
	// interchange processed before. It needs a Reason.
	Force  bool   `json:"force,omitempty"`
	Reason string `json:"reason,omitempty"`
	// AllowPoison lets quarantined messages be replayed (they crashed or
	// hung the hub: analyse them in the sandbox first).
	AllowPoison bool `json:"allow_poison,omitempty"`
	// Progress, if set, is called after each message.
	Progress func(done, total int) `json:"-"`
	// Outcome is how long to wait for what became of the copies sent
	// (FollowReplay; 0: not at all, the batch's live tally says later).
	Outcome time.Duration `json:"-"`
}

// Replay outcomes.
const (
	OutcomeReplayed    = "replayed"
	OutcomeWouldReplay = "would-replay"
	OutcomeWouldFail   = "would-fail"
	OutcomeSkipped     = "skipped"
	OutcomeFailed      = "failed"
	// OutcomeAlreadyReplayed: an edited original whose edit went back
	// already; nothing to do.
	OutcomeAlreadyReplayed = "already-replayed"
)

// ReplayItem is the outcome for one message.
type ReplayItem struct {
	ID string `json:"id"`
	// Version is the edited version replayed in place of ID, if any.
	Version string `json:"version,omitempty"`
	Subject string `json:"subject,omitempty"`
	Outcome string `json:"outcome"`
	// NewID is where the replayed copy was stored (INGEST:n).
	NewID string `json:"new_id,omitempty"`
	// Deduplicated: the server had the copy already (a re-run after a
	// crash); nothing was published twice.
	Deduplicated bool   `json:"deduplicated,omitempty"`
	Error        string `json:"error,omitempty"`
	// Reason names a known refusal for tools and hints: poison-not-allowed,
	// no-destination, edit-pending, superseded or not-found.
	Reason string  `json:"reason,omitempty"`
	DryRun *DryRun `json:"dry_run,omitempty"`
	// What became of the copy, once followed (client.Verdict): Where is
	// the new dead letter or quarantine ID (linked back by its
	// x-replayed-from), or the first output subject; Verdict says it in
	// words.
	Where      string   `json:"where,omitempty"`
	Subjects   []string `json:"subjects,omitempty"`
	Cause      string   `json:"cause,omitempty"`
	Detail     string   `json:"detail,omitempty"`
	DeadLetter string   `json:"dead_letter,omitempty"`
	Verdict    string   `json:"verdict,omitempty"`
}

// ReplayReport sums up a replay.
type ReplayReport struct {
	DryRun  bool `json:"dry_run"`
	Matched int  `json:"matched"`
	Left    int  `json:"left"` // matched but not sent (over Max, or interrupted): run again
	// OverMax is the part of Left that Max held back; the rest of Left was
	// interrupted (the context ended).
	OverMax  int `json:"over_max,omitempty"`
	Replayed int `json:"replayed"`
	Skipped  int `json:"skipped"`
	// AlreadyReplayed counts edited originals whose edit was replayed
	// before: done, not a failure.
	AlreadyReplayed int          `json:"already_replayed"`
	Failed          int          `json:"failed"`
	Items           []ReplayItem `json:"items"`
	// Batch is the replay batch recorded (ReplayBatch), Tally its items
	// by outcome as followed; Warning says why following failed.
	Batch   string         `json:"batch,omitempty"`
	Tally   map[string]int `json:"tally,omitempty"`
	Warning string         `json:"warning,omitempty"`
}

// Refusals of one message in a replay.
var (
	// ErrPoisonNotAllowed: quarantined poison is replayed only when the
	// request allows it, after a sandbox analysis.
	ErrPoisonNotAllowed = errors.New("quarantined poison (it crashed or hung the hub) is replayed only when poison is allowed explicitly; analyse it in the sandbox first")
	// ErrNoLedger: a forced replay needs the ledger to hold its grant.
	ErrNoLedger = errors.New("forcing needs the interchange ledger, which is not configured here")
	// ErrNotHubCopy: the message does not carry the hub's x-hub-mac, so its
	// x-partner-id cannot be trusted to pick the destination.
	ErrNotHubCopy = errors.New("not a copy the hub made (or made before its audit key); name the destination")
	// ErrUnvouchedPartner: a copy an older hub made (x-hub-mac v1) does not
	// vouch for its x-partner-id, and its original, which would, cannot be
	// read or was stored for another partner.
	ErrUnvouchedPartner = errors.New("an older hub's copy (x-hub-mac v1) does not vouch for its x-partner-id, and its original does not confirm it; name the destination (--to edi.ingest.<partner>)")
	// ErrNoDestination: the message has no valid x-partner-id of the hub's
	// and the request named no destination.
	ErrNoDestination = errors.New("the hub recorded no valid partner (x-partner-id) for this message; name the destination")
)

// reasonOf names a known refusal (ReplayItem.Reason).
func reasonOf(err error) string {
	switch {
	case errors.Is(err, ErrPoisonNotAllowed):
		return "poison-not-allowed"
	case errors.Is(err, ErrNoDestination), errors.Is(err, ErrNotHubCopy), errors.Is(err, ErrUnvouchedPartner):
		return "no-destination"
	case errors.Is(err, ErrEditPending):
		return "edit-pending"
	case errors.Is(err, ErrSuperseded):
		return "superseded"
	case errors.Is(err, ErrNotFound):
		return "not-found"
	}
	return ""
}

// ErrBadRequest wraps refusals of a replay request (usage errors).
var ErrBadRequest = errors.New("bad request")

func BadRequest(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, a...))
}

func (o *Ops) checkReplay(req *ReplayRequest) error {
	if (len(req.IDs) == 0) == (req.Filter == nil) {
		return BadRequest("name message IDs or a filter, not both and not neither")
	}
	if req.Filter != nil && req.Filter.IsZero() {
		return BadRequest("a filter that selects everything is refused; name a kind, stage, cause, partner, error class, fingerprint or since")
	}
	if req.Force && strings.TrimSpace(req.Reason) == "" {
		return fmt.Errorf("%w: forcing overrides the interchange ledger: %w", ErrBadRequest, ErrReasonRequired)
	}
	if req.Rate == 0 {
		req.Rate = DefaultReplayRate
	}
	if req.Rate < 0 || req.Rate > 10000 {
		return BadRequest("rate %v/s: want more than 0 and at most 10000", req.Rate)
	}
	if req.Max == 0 {
		req.Max = DefaultReplayMax
	}
	if req.Max < 0 {
		return BadRequest("max %d: want a positive number (there is no unlimited)", req.Max)
	}
	if len(req.IDs) > req.Max {
		return BadRequest("%d IDs named but max is %d; raise the maximum to replay them all", len(req.IDs), req.Max)
	}
	if req.To != "" {
		if err := checkReplaySubject(req.To); err != nil {
			return err
		}
	}
	return nil
}

// checkReplaySubject accepts only a partner's ingest subject,
// edi.ingest.<partner>: a replay goes through the whole pipeline again,
// never straight to an output, failure, audit or system subject.
func checkReplaySubject(s string) error {
	p, ok := wire.PartnerOfTopic(s)
	if !ok || wire.ValidPartnerID(p) != nil {
		return BadRequest("destination %q: a replay goes to a partner's ingest subject, edi.ingest.<partner>; use park for the rest", escape.Line(s))
	}
	return nil
}

// Replay publishes messages back, byte for byte, to their original topic
// (or To), paced by Rate and capped by Max. Each copy carries the history
// headers plus x-replayed-from and has Nats-Msg-Id replay:<partner>:<HMAC
// of the ID with the audit key>, so a re-run after a crash is dropped by the
// server and nobody else can publish the id first; only after the server's
// ack names the hub's own copy is the event audited and the message
// removed from its stream. An edited
// original is replaced by its edit; the original is never sent.
func (o *Ops) Replay(ctx context.Context, req ReplayRequest) (*ReplayReport, error) {
	if err := o.checkReplay(&req); err != nil {
		return nil, err
	}
	rep := &ReplayReport{DryRun: req.DryRun}
	if req.Filter != nil {
		f := *req.Filter
		if len(f.Kinds) == 0 {
			// Parked messages wait for a person's decision: a filter
			// replays them only when it names kind=parking.
			f.Kinds = []string{wire.KindDLQ}
			if req.AllowPoison {
				f.Kinds = append(f.Kinds, wire.KindPoison)
			}
		}
		f.Superseded = false
		req.Filter = &f
	}
	refs, matched, overMax, err := o.targets(ctx, req.Filter, req.IDs, req.Max)
	if err != nil {
		return nil, err
	}
	rep.Matched, rep.Left, rep.OverMax = matched, overMax, overMax
	interval := time.Duration(float64(time.Second) / req.Rate)
	start, since := o.o.Now(), time.Now()
	for i, ref := range refs {
		if err := ctx.Err(); err != nil {
			rep.Left += len(refs) - i
			break
		}
		if i > 0 && !req.DryRun {
			if d := start.Add(time.Duration(i) * interval).Sub(o.o.Now()); d > 0 {
				o.o.Sleep(d)
			}
			if ctx.Err() != nil { // interrupted while pacing: not sent, not skipped
				rep.Left += len(refs) - i
				break
			}
		}
		it := o.replayOne(ctx, ref, &req)
		switch it.Outcome {
		case OutcomeReplayed, OutcomeWouldReplay:
			rep.Replayed++
		case OutcomeSkipped:
			rep.Skipped++
		case OutcomeAlreadyReplayed:
			rep.AlreadyReplayed++
		default:
			rep.Failed++
		}
		rep.Items = append(rep.Items, it)
		if req.Progress != nil {
			req.Progress(i+1, len(refs))
		}
	}
	if err := o.FollowReplay(ctx, rep, since, req.Outcome); err != nil {
		rep.Warning = err.Error()
	}
	return rep, nil
}

func (o *Ops) replayOne(ctx context.Context, ref wire.MsgRef, req *ReplayRequest) ReplayItem {
	it := ReplayItem{ID: ref.String(), Outcome: OutcomeFailed}
	fail := func(outcome string, err error) ReplayItem {
		it.Outcome, it.Error, it.Reason = outcome, err.Error(), reasonOf(err)
		return it
	}
	target, err := o.resolve(ctx, ref)
	if er := (*EditReplayedError)(nil); errors.As(err, &er) {
		it.Outcome, it.Reason, it.Error = OutcomeAlreadyReplayed, "already-replayed", err.Error()
		it.Version, it.NewID = er.Edit, er.ReplayedAs
		return it
	}
	if err != nil {
		return fail(OutcomeSkipped, err)
	}
	if target != ref {
		it.Version = target.String()
	}
	raw, err := o.getMsg(ctx, target)
	if err != nil {
		return fail(OutcomeSkipped, err)
	}
	e := o.entryOf(target.Stream, target.Seq, raw.Subject, raw.Time, raw.Header, len(raw.Data))
	if e.Kind == wire.KindPoison && !req.AllowPoison {
		return fail(OutcomeSkipped, ErrPoisonNotAllowed)
	}
	// The destination is computed from the partner the hub recorded (which
	// it took from the stored subject), never read from a header a
	// producer could have chosen.
	it.Subject = req.To
	if it.Subject == "" {
		if wire.ValidPartnerID(e.Partner) != nil {
			return fail(OutcomeFailed, ErrNoDestination)
		}
		// Whoever may publish on a DLQ subject can write x-partner-id; with
		// the audit key the hub's own copies are told apart by x-hub-mac.
		if keys := o.o.Auditor.Keyring(); keys != nil {
			v, err := audit.CheckCopy(keys, raw.Header, raw.Data)
			if err != nil {
				return fail(OutcomeFailed, fmt.Errorf("%w (%v)", ErrNotHubCopy, err))
			}
			if v < audit.CopyMACv2 {
				if err := o.confirmPartner(ctx, raw.Header, e.Partner); err != nil {
					return fail(OutcomeFailed, err)
				}
			}
		}
		it.Subject = wire.IngestSubject(e.Partner)
	}
	// A reference is replayed as it is (the hub takes the payload it
	// names); the payload is fetched and checked first, for the dry run,
	// the grant and the audit trail, and so that a reference whose payload
	// is gone is not sent.
	partner, _ := wire.PartnerOfTopic(it.Subject)
	data, referenced, err := o.realPayload(ctx, raw, cmp.Or(e.Partner, partner))
	if err != nil {
		return fail(OutcomeFailed, err)
	}
	if req.DryRun {
		it.DryRun = o.dryRun(data, o.replayHeader(raw.Header, data, target, req.Force), e, it.Subject, req.Force)
		it.Outcome = OutcomeWouldReplay
		if !it.DryRun.OK {
			it.Outcome = OutcomeWouldFail
		}
		return it
	}
	m := &nats.Msg{Subject: it.Subject, Header: o.replayHeader(raw.Header, data, target, req.Force), Data: raw.Data}
	if referenced != nil && (raw.Header.Get(wire.HdrUploadSHA256) == "" || partner != e.Partner) {
		// The hub takes an upload of the partner it is sent for, and never
		// an x-payload-ref: such a payload goes inline when it fits, else
		// as an upload of the destination partner.
		if err := o.setPayload(ctx, m, data, partner); err != nil {
			return fail(OutcomeFailed, err)
		}
	}
	sum := audit.PayloadHash(data) // what the parse stage checks the grant against
	if req.Force {
		// The grant, not the header, is what lets the copy past the
		// ledger: written first, so the hub never sees the copy without it.
		if o.o.Grants == nil {
			return fail(OutcomeFailed, ErrNoLedger)
		}
		if err := o.o.Grants.Grant(target.String(), sum); err != nil {
			return fail(OutcomeFailed, err)
		}
	}
	ack, err := o.publishOwnCopy(ctx, m, o.copyMsgID("replay", partner, target, ""), wire.HdrReplayedFrom)
	if err != nil {
		return fail(OutcomeFailed, fmt.Errorf("publish to %s: %w", it.Subject, err))
	}
	it.NewID, it.Deduplicated = wire.MsgRef{Stream: ack.Stream, Seq: ack.Sequence}.String(), ack.Duplicate
	ids := []string{ref.String()}
	if target != ref {
		ids = append(ids, target.String())
	}
	details := map[string]string{"to": it.Subject, "new_id": it.NewID, "force": fmt.Sprint(req.Force)}
	if err := o.audit(ctx, audit.Event{Action: "replay", IDs: append(ids, it.NewID), Reason: req.Reason,
		PayloadBefore: sum, PayloadAfter: sum, Details: details}, "audit:replay:"+target.String()); err != nil {
		return fail(OutcomeFailed, fmt.Errorf("replayed as %s, but: %w (run the replay again: the copy is deduplicated)", it.NewID, err))
	}
	// An edit that went back leaves its original marked done, whichever
	// of the two IDs was named.
	if orig, err := o.ParseID(raw.Header.Get(wire.HdrEditedFrom)); err == nil {
		if err := o.markEditReplayed(ctx, orig, target, it.NewID); err != nil {
			o.log.Warn().Err(err).Msg("edit replayed, but its original still reads as waiting for it")
		}
	}
	if err := o.deleteMsg(ctx, target, false); err != nil {
		return fail(OutcomeFailed, fmt.Errorf("replayed as %s, but: %w", it.NewID, err))
	}
	it.Outcome, it.Error = OutcomeReplayed, ""
	if o.o.Replayed != nil {
		o.o.Replayed(ctx, e.Kind, it)
	}
	return it
}

// replayHeader is the header a replay of target sends with its copy
// (the dry run decides on the same one), signed with x-replay-mac so
// that the hub links what becomes of the copy back to target.
func (o *Ops) replayHeader(h nats.Header, data []byte, target wire.MsgRef, force bool) nats.Header {
	out := ejs.CopyHeaders(h)
	out.Del(wire.HdrReplayForce)
	out.Set(wire.HdrReplayedFrom, target.String())
	out.Set(wire.HdrReplayedBy, escape.Header(o.o.Actor))
	if force {
		out.Set(wire.HdrReplayForce, "true")
	}
	audit.SignReplay(o.o.Auditor.Keyring(), out, data)
	return out
}

// DryRun is what this build's parse decision (parse.Decide: the guard,
// the parser, the partner agreements, the ledger if configured) makes of
// a payload.
type DryRun struct {
	OK           bool              `json:"ok"`
	Subject      string            `json:"subject"`
	Standard     string            `json:"standard,omitempty"`
	Guard        string            `json:"guard"`
	Parse        string            `json:"parse,omitempty"`
	Messages     int               `json:"messages,omitempty"`
	Types        []string          `json:"types,omitempty"`
	Interchanges []parse.LedgerKey `json:"interchanges,omitempty"`
	// Cause is the DLQ cause the parse stage would dead-letter it under
	// ("" when it would be parsed or acked as a duplicate).
	Cause string `json:"cause,omitempty"`
	// Acks counts the acknowledgements the partner would get.
	Acks    int    `json:"acks,omitempty"`
	Verdict string `json:"verdict"`
}

// dryRun asks parse.Decide what the parse stage would do with data sent
// on subject with header h, with this build's parse settings, partner
// agreements and ledger: the same decision, sending nothing. A panic is
// reported, not propagated: the payload is hostile until proven not.
func (o *Ops) dryRun(data []byte, h nats.Header, e Entry, subject string, force bool) (d *DryRun) {
	d = &DryRun{Subject: subject, Guard: "ok"}
	defer func() {
		if r := recover(); r != nil {
			d.OK, d.Verdict = false, escape.Text(fmt.Sprintf("the parser panicked: %v — this build would quarantine it", r))
		}
	}()
	partnerID, _ := wire.PartnerOfTopic(subject)
	in := &parse.Input{Partner: partnerID, Stream: o.o.Streams.Ingest, Header: h, Data: data}
	dec := parse.Decide(context.Background(), in, parse.With{Config: o.o.EDIFACT, Ledger: o.o.Ledger, Agreements: o.o.Agreements})
	d.Standard, d.Messages, d.Acks, d.Cause = dec.Standard, dec.Messages, len(dec.Acks), dec.Cause()
	for _, t := range dec.Types {
		d.Types = append(d.Types, escape.Line(t))
	}
	for _, k := range dec.Keys {
		d.Interchanges = append(d.Interchanges, parse.LedgerKey{Partner: escape.Line(k.Partner), Sender: escape.Line(k.Sender),
			Recipient: escape.Line(k.Recipient), ControlRef: escape.Line(k.ControlRef)})
	}
	var ge *edifact.GuardError
	var ue *ubl.Error
	var dup *hub.DuplicateError
	var unavailable *hub.UnavailableError
	switch {
	case dec.Err == nil:
		d.OK, d.Parse = true, "ok"
		switch {
		case o.o.Ledger != nil:
			d.Verdict = fmt.Sprintf("would be parsed into %d message(s)", d.Messages)
		case force:
			d.Verdict = fmt.Sprintf("would be parsed into %d message(s), even if the ledger has seen it (x-replay-force)", d.Messages)
		default:
			d.Verdict = fmt.Sprintf("would be parsed into %d message(s), unless the ledger has seen the interchange (then acked as a duplicate)", d.Messages)
		}
	case errors.As(dec.Err, &dup):
		d.OK, d.Parse = true, "ok"
		d.Verdict = "would be acked as a duplicate without outputs: the ledger has seen every interchange of it (replay with force to process it again)"
	case errors.As(dec.Err, &unavailable):
		d.Parse = "ok"
		d.Verdict = "cannot say: " + escape.Text(dec.Err.Error())
	case errors.As(dec.Err, &ge), errors.As(dec.Err, &ue):
		d.Guard = escape.Text(dec.Err.Error())
		d.Verdict = "would be dead-lettered again (" + d.Cause + "): the guard refuses it"
	case d.Cause != "":
		d.Parse = escape.Text(dec.Err.Error())
		d.Verdict = "would be dead-lettered again (" + d.Cause + "): " + refusedBy(d.Cause)
	default:
		d.Parse = escape.Text(dec.Err.Error())
		d.Verdict = "would fail again: " + escape.Text(dec.Err.Error())
	}
	if d.Acks > 0 {
		d.Verdict += fmt.Sprintf("; the partner would get %d acknowledgement(s)", d.Acks)
	}
	if dr := e.Headers[wire.HdrDrill]; len(dr) > 0 {
		d.Verdict += "; it carries x-drill: " + escape.Line(dr[0]) + " (a drill hub fails it on purpose)"
	}
	if e.Stage != "" && e.Stage != "parse" {
		d.Verdict += "; it failed in stage " + escape.Line(e.Stage) + ", which a dry-run does not run"
	}
	return d
}

// refusedBy says in words who refuses an interchange for a cause.
func refusedBy(cause string) string {
	switch cause {
	case wire.CauseSchema:
		return "the parser refuses it"
	case wire.CauseBusiness:
		return "a business rule of the partner's profile refuses it"
	case wire.CausePartnerRejected:
		return "the partner's profile refuses it"
	case wire.CauseSignatureInvalid:
		return "its signature does not verify"
	}
	return "the parse stage refuses it"
}

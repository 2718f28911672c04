package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/ops"
)

func init() {
	register(command{name: "audit", summary: "read the audit trail (ls) and check its hash chain (verify)", run: runAudit})
}

const auditUsage = `Usage: edihub audit <subcommand> [flags]

  ls [--since 24h] [--limit N]   events, oldest first (actor, action, IDs, reason, payload hashes);
     [--actor A] [--action X]    narrowed to an actor, an action, a message ID, or
     [--message ID] [--human]    to what people did (--human); page views (show) are
     [--all]                     read events, left out unless --all or --action show
  verify [--anchor HASH]         check the hash chain and each event's MAC from the first
                                 event; names every event that is altered, missing, reordered,
                                 forged (MAC wrong or absent) or foreign (not an event), by
                                 sequence. Exit 1 if any, or if no audit key was found (then
                                 only the hash chain is checked, which anyone can forge).
                                 Note the printed last hash somewhere else (a ticket) and pass
                                 it as --anchor later: that also catches events cut off at the end.

  ack-foreign SEQ... --reason R  acknowledge foreign messages verify reported (junk, forged,
                                 unsigned) with an audited event: they stay listed as
                                 foreign but no longer fail verify

The audit key is <data>/audit.key (--data, default the config's data_dir or ./data),
or $EDIHUB_AUDIT_KEY; serve creates the file at its first start.
`

func runAudit(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(e.stderr, auditUsage)
		if len(args) == 0 {
			return &exitError{code: exitUsage, err: errors.New("")}
		}
		return errHelp
	}
	switch args[0] {
	case "ls":
		return auditLs(ctx, e, args[1:])
	case "verify":
		return auditVerify(ctx, e, args[1:])
	case "ack-foreign":
		return auditAckForeign(ctx, e, args[1:])
	}
	return usageErr("unknown subcommand %q (ls, verify, ack-foreign)", escape.Line(args[0]))
}

func auditLs(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "audit ls", "[--since 24h] [--limit N] [--actor NAME] [--action ACTION] [--message ID] [--human] [--all]")
	var of opsFlags
	of.register(fs, e)
	since := fs.String("since", "", "only events of the last 30m, 2h, 7d, …")
	limit := fs.Int("limit", 200, "at most the newest N events (0: all)")
	var f ops.AuditFilter
	fs.StringVar(&f.Action, "action", "", "only this action (show, replay, park, drop, edit, quarantine, duplicate-skipped, …)")
	fs.StringVar(&f.Message, "message", "", "only events naming this message ID (DLQ:12, INGEST:42, POISON:3)")
	fs.BoolVar(&f.Human, "human", false, "only what people did (leave out quarantines, duplicates, forensic reports)")
	fs.BoolVar(&f.All, "all", false, "also the read events (show: who looked at which payload), left out by default")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("unexpected argument %q", escape.Line(pos[0]))
	}
	var d time.Duration
	if *since != "" {
		if d, err = ops.ParseSince(*since); err != nil {
			return usageErr("--since: %v", err)
		}
	}
	if *limit < 0 {
		return usageErr("--limit: want 0 or more")
	}
	s, err := of.connectAs(e, "edihub-audit", readsOnly)
	if err != nil {
		return err
	}
	defer s.close()
	// ls acts for nobody, so --actor (who acts, elsewhere) filters here.
	f.Since, f.Actor = d, of.actor
	recs, err := s.ops.AuditList(ctx, f, *limit)
	if err != nil {
		return opsErr(err)
	}
	if s.json {
		return s.printJSON(map[string]any{"events": recs})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tACTOR\tACTION\tIDS\tREASON\tPAYLOAD\tDETAILS")
	for _, r := range recs {
		ev := r.Event
		if r.Error != "" {
			fmt.Fprintf(tw, "%d\t%s\t-\t(unreadable)\t-\t-\t-\t%s\n", r.Seq, r.Stored.Format("2006-01-02 15:04:05Z"), escape.Text(r.Error))
			continue
		}
		payload := short(ev.PayloadBefore)
		if ev.PayloadAfter != "" && ev.PayloadAfter != ev.PayloadBefore {
			payload += "→" + short(ev.PayloadAfter)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, ev.Time.UTC().Format("2006-01-02 15:04:05Z"), cell(ev.Actor),
			cell(ev.Action), cells(ev.IDs), clip(escape.Text(nonEmptyStr(ev.Reason, "-")), 50), nonEmptyStr(payload, "-"), details(ev.Details))
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "%d event(s)\n", len(recs))
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func details(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = escape.Text(k) + "=" + escape.Text(m[k]) // the hub stores them escaped once (escape.Header)
	}
	return clip(strings.Join(parts, " "), 100)
}

func auditVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "audit verify", "[--anchor HASH]")
	var of opsFlags
	of.register(fs, e)
	anchor := fs.String("anchor", "", "a last hash noted earlier: it must still be in the chain")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("unexpected argument %q", escape.Line(pos[0]))
	}
	s, err := of.connectAs(e, "edihub-audit", readsOnly)
	if err != nil {
		return err
	}
	defer s.close()
	v, err := s.ops.AuditVerify(ctx, *anchor)
	if errors.Is(err, audit.ErrBadAnchor) {
		return usageErr("--anchor: %v", err)
	}
	if err != nil {
		return opsErr(err)
	}
	if s.json {
		if err := s.printJSON(v); err != nil {
			return err
		}
	} else {
		if v.OK {
			fmt.Fprintf(e.stdout, "audit chain intact: %d events, last seq %d, last hash %s\n", v.Events, v.LastSeq, nonEmptyStr(v.LastHash, "-"))
		}
		if v.Legacy > 0 {
			fmt.Fprintf(e.stdout, "%d legacy event(s) through seq %d carry no MAC (written before audit keys): only the hash chain vouches for them\n", v.Legacy, v.LegacyThrough)
		}
		for _, p := range v.Problems {
			fmt.Fprintf(e.stdout, "event %d: %s: %s\n", p.Seq, p.Kind, escape.Line(p.Detail))
		}
		if v.ChainOK && !v.OK {
			fmt.Fprintf(e.stdout, "the hub's own events chain; the messages above are foreign: look at them, then 'edihub audit ack-foreign SEQ... --reason TEXT'\n")
		}
		for _, p := range v.Foreign {
			if p.Acknowledged {
				fmt.Fprintf(e.stdout, "message %d: foreign (%s), acknowledged\n", p.Seq, p.Kind)
			}
		}
	}
	switch {
	case v.AnchorMissing && v.OK:
		return usageErr("anchor %s not found: check it (a unique prefix of at least %d hex digits will do); if it is right, the events after it were cut off", escape.Line(*anchor), audit.MinAnchorDigits)
	case !v.OK && !v.Authenticated:
		return failedErr("audit chain broken at event %d (%s): %s (%d problem(s) in all); and %s", v.Problem.Seq, v.Problem.Kind, v.Problem.Detail, len(v.Problems), audit.NoKeyNote)
	case !v.OK:
		return failedErr("audit chain broken at event %d (%s): %s (%d problem(s) in all)", v.Problem.Seq, v.Problem.Kind, v.Problem.Detail, len(v.Problems))
	case !v.Authenticated:
		return failedErr("%s; pass the hub's --data or set $%s", audit.NoKeyNote, audit.KeyEnv)
	}
	return nil
}

func auditAckForeign(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "audit ack-foreign", "SEQ... --reason TEXT")
	var of opsFlags
	of.register(fs, e)
	reason := fs.String("reason", "", "why these messages may be left (required)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	var seqs []uint64
	for _, p := range pos {
		n, err := strconv.ParseUint(strings.TrimPrefix(p, "AUDIT:"), 10, 64)
		if err != nil || n == 0 {
			return usageErr("%q: want a sequence number of the audit stream", escape.Line(p))
		}
		seqs = append(seqs, n)
	}
	s, err := of.connectAs(e, "edihub-audit", appendsHere)
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.ops.AcknowledgeForeign(ctx, seqs, *reason); err != nil {
		if errors.Is(err, ops.ErrNotForeign) || errors.Is(err, ops.ErrReasonRequired) {
			return usageErr("%v", err)
		}
		return opsErr(err)
	}
	fmt.Fprintf(e.stdout, "acknowledged %d foreign message(s)\n", len(seqs))
	return nil
}

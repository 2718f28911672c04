package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/ops"
)

func dlqReplay(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "dlq replay", "ID... | --filter key=value,... [--to SUBJECT] [--rate 10/s] [--max 100] [--dry-run] [--force --reason TEXT]")
	var of opsFlags
	of.register(fs, e)
	filter := fs.String("filter", "", "replay what matches: key=value,... (kind, stage, cause, partner, error-class, fingerprint, since)")
	to := fs.String("to", "", "publish here instead of x-original-topic (one subject, e.g. edi.ingest.ACME)")
	rate := fs.String("rate", "10/s", "pace: N/s, N/m or N/h")
	maxN := fs.Int("max", ops.DefaultReplayMax, "replay at most this many (no unlimited; run again for the rest)")
	dry := fs.Bool("dry-run", false, "run this build's guard and parser on each message and say what would happen; changes nothing")
	force := fs.Bool("force", false, "process even if the interchange ledger has seen the interchange (sets x-replay-force; needs --reason)")
	reason := fs.String("reason", "", "why, for the audit trail (required with --force)")
	allowPoison := fs.Bool("allow-poison", false, "also replay quarantined poison (analyse it in the sandbox first)")
	outcome := fs.Duration("outcome", 5*time.Second, "how long to wait for what became of each copy: parsed, dead-lettered again, duplicate, quarantined (0: don't wait)")
	ids, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *outcome < 0 {
		return usageErr("--outcome %v: want 0 (don't wait) or more", *outcome)
	}
	req := ops.ReplayRequest{IDs: ids, To: *to, Max: *maxN, DryRun: *dry, Force: *force, Reason: *reason, AllowPoison: *allowPoison, Outcome: *outcome}
	if req.Rate, err = parseRate(*rate); err != nil {
		return usageErr("--rate: %v", err)
	}
	if *maxN < 1 {
		return usageErr("--max %d: want at least 1 (there is no unlimited)", *maxN)
	}
	switch {
	case *filter != "" && len(ids) > 0:
		return usageErr("name message IDs or --filter, not both")
	case *filter == "" && len(ids) == 0:
		return usageErr("name message IDs or --filter (replay is never automatic)")
	case *filter != "":
		f, err := ops.ParseFilter(*filter)
		if err != nil {
			return usageErr("--filter: %v", err)
		}
		req.Filter = &f
	}
	if *force && strings.TrimSpace(*reason) == "" {
		return usageErr("--force overrides the interchange ledger: --reason is required")
	}
	use := appendsOrAPI
	if *dry {
		use = readsOnly // a dry run audits nothing
	}
	s, err := of.connectAs(e, "edihub-dlq", use)
	if err != nil {
		return err
	}
	defer s.close()
	progress := isTerminal(e.stderr) && !s.json && !*dry
	if progress {
		start := opsClock.now()
		req.Progress = func(done, total int) {
			fmt.Fprintf(e.stderr, "\rreplayed %d/%d (%.0fs)", done, total, opsClock.now().Sub(start).Seconds())
		}
	}
	rep, err := s.act().Replay(ctx, req)
	if progress {
		fmt.Fprintln(e.stderr)
	}
	if err != nil {
		return opsErr(err)
	}
	if s.json {
		if err := s.printJSON(rep); err != nil {
			return err
		}
	} else {
		printReplay(e, rep)
	}
	switch {
	case rep.Failed > 0 || rep.Skipped > 0:
		verb := "replayed"
		if rep.DryRun {
			verb = "replayable"
		}
		return failedErr("%d of %d not %s", rep.Failed+rep.Skipped, len(rep.Items), verb)
	case ctx.Err() != nil:
		return failedErr("interrupted; %d left", rep.Left)
	}
	return nil
}

func printReplay(e *env, rep *ops.ReplayReport) {
	w := e.stdout
	for _, it := range rep.Items {
		id := it.ID
		if it.Version != "" {
			id += " (its edit " + it.Version + ")"
		}
		switch {
		case it.DryRun != nil:
			d := it.DryRun
			fmt.Fprintf(w, "%s → %s: %s\n", id, escape.Line(it.Subject), escape.Text(d.Verdict))
			fmt.Fprintf(w, "    guard: %s\n", escape.Text(d.Guard))
			if d.Parse != "" {
				fmt.Fprintf(w, "    parse: %s\n", escape.Text(d.Parse))
			}
			for _, k := range d.Interchanges {
				fmt.Fprintf(w, "    interchange %s → %s #%s\n", escape.Line(k.Sender), escape.Line(k.Recipient), escape.Line(k.ControlRef))
			}
		case it.NewID != "" && it.Outcome != ops.OutcomeAlreadyReplayed && it.Outcome != ops.OutcomeFailed:
			dedup := ""
			if it.Deduplicated {
				dedup = " (the server had it already: not sent twice)"
			}
			fmt.Fprintf(w, "%s → %s: replayed as %s%s%s\n", id, escape.Line(it.Subject), it.NewID, dedup, followed(it))
		case it.Outcome == ops.OutcomeAlreadyReplayed:
			fmt.Fprintf(w, "%s: already replayed as %s — nothing left to do (the original stays as evidence)\n", id, escape.Line(it.NewID))
		default:
			fmt.Fprintf(w, "%s: %s: %s%s\n", id, strings.ToUpper(it.Outcome), escape.Text(it.Error), replayHint(it.Reason))
		}
	}
	verb := "replayed"
	if rep.DryRun {
		verb = "would replay (dry-run: nothing was changed)"
	}
	fmt.Fprintf(w, "matched %d, %s %d, skipped %d, failed %d", rep.Matched, verb, rep.Replayed, rep.Skipped, rep.Failed)
	if rep.AlreadyReplayed > 0 {
		fmt.Fprintf(w, ", already replayed %d", rep.AlreadyReplayed)
	}
	if rep.OverMax > 0 {
		fmt.Fprintf(w, "; %d more match — run again (or raise --max)", rep.OverMax)
	}
	if n := rep.Left - rep.OverMax; n > 0 {
		fmt.Fprintf(w, "; %d not sent: interrupted — run again to send them", n)
	}
	fmt.Fprintln(w)
	if rep.Batch != "" {
		fmt.Fprintf(w, "replay batch %s: %s (later: edihub dlq replays %s)\n", rep.Batch, tallyLine(rep.Tally), rep.Batch)
	}
	if rep.Warning != "" {
		fmt.Fprintf(w, "warning: %s\n", escape.Text(rep.Warning))
	}
}

// tallyLine says how many copies of a batch ended where.
func tallyLine(tally map[string]int) string {
	words := []struct{ outcome, say string }{
		{ops.OutcomeParsed, "parsed"}, {ops.OutcomeDeadLettered, "dead-lettered again"}, {ops.OutcomeDuplicate, "duplicate"},
		{ops.OutcomeQuarantined, "quarantined"}, {ops.OutcomeNoVerdict, "no verdict yet"}, {ops.OutcomeReplayed, "not followed"},
	}
	var parts []string
	for _, wd := range words {
		if n := tally[wd.outcome]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, wd.say))
		}
	}
	return strings.Join(parts, ", ")
}

// followed is what became of a replayed copy, for its line.
func followed(it ops.ReplayItem) string {
	switch it.Outcome {
	case ops.OutcomeReplayed:
		return ""
	case ops.OutcomeNoVerdict:
		return " — no verdict yet (queued or retrying; edihub dlq replays BATCH says later)"
	}
	return " — " + it.Verdict
}

// parseRate reads N/s, N/m, N/h or a bare N (per second).
func parseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q: want a positive rate such as 10/s, 30/m or 500/h", s)
	}
	per := map[string]time.Duration{"": time.Second, "s": time.Second, "m": time.Minute, "min": time.Minute, "h": time.Hour}[unit]
	if per == 0 {
		return 0, fmt.Errorf("%q: unit must be s, m or h", s)
	}
	return n / per.Seconds(), nil
}

// replayHint is the CLI's advice for a refusal the library names (the
// library itself names no flags).
func replayHint(reason string) string {
	switch reason {
	case "poison-not-allowed":
		return " — analyse it with 'edihub poison show', then replay with --allow-poison"
	case "no-destination":
		return " — name it with --to"
	case "edit-pending":
		return " — run 'edihub dlq edit' on it again (or drop it)"
	case "not-found":
		return " — 'edihub audit ls' says what happened to it"
	}
	return ""
}

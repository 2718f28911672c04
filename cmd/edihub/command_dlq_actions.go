package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/ops"
)

func dlqShow(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "dlq show", "ID [--all] [--raw]")
	var of opsFlags
	of.register(fs, e)
	all := fs.Bool("all", false, "show every segment (default: the first 500 and 64 KiB of an unreadable rest)")
	raw := fs.Bool("raw", false, "show the payload as escaped bytes instead of one segment a line")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("name exactly one message ID, e.g. DLQ:1234")
	}
	s, err := of.connectAs(e, "edihub-dlq", appendsOrAPI)
	if err != nil {
		return err
	}
	defer s.close()
	so := ops.ShowOptions{MaxSegments: 500, MaxRest: 64 << 10}
	if *all {
		so = ops.ShowOptions{}
	}
	res, err := s.act().Show(ctx, pos[0], so)
	if err != nil {
		return opsErr(err)
	}
	if s.json {
		return s.printJSON(res)
	}
	w := e.stdout
	en := res.Entry
	fmt.Fprintf(w, "%s  %s  stored %s (%s ago)  %d bytes  sha256 %s\n", en.ID, escape.Line(en.Subject),
		en.Time.Format("2006-01-02 15:04:05Z"), age(opsClock.now().Sub(en.Time)), len(res.Payload), res.PayloadSHA256)
	if r := res.Referenced; r != nil && r.Error == "" {
		fmt.Fprintf(w, "payload stored aside as %s (%d bytes, SHA-256 checked): shown fetched; a replay sends the reference\n", escape.Line(r.Ref), r.Size)
	} else if r != nil {
		fmt.Fprintf(w, "payload stored aside as %s, not fetched (%s): the message's body is shown\n", escape.Line(r.Ref), escape.Line(r.Error))
	}
	switch {
	case en.EditReplayedAs != "" && ops.ReplayDone(res.Replay):
		fmt.Fprintf(w, "done: its edit %s was replayed as %s and %s; this original stays as evidence (drop it when no longer needed)\n",
			escape.Line(en.SupersededBy), escape.Line(en.EditReplayedAs), res.Replay.Verdict)
	case en.EditReplayedAs != "" && res.Replay != nil && res.Replay.Where != "":
		fmt.Fprintf(w, "not done: its edit %s was replayed as %s and %s — replayed → %s; see edihub dlq show %s\n",
			escape.Line(en.SupersededBy), escape.Line(en.EditReplayedAs), res.Replay.Verdict, res.Replay.Where, res.Replay.Where)
	case en.EditReplayedAs != "" && res.Replay != nil:
		fmt.Fprintf(w, "not done yet: its edit %s was replayed as %s: %s (replay batch %s)\n",
			escape.Line(en.SupersededBy), escape.Line(en.EditReplayedAs), nonEmptyStr(res.Replay.Verdict, "no verdict yet"), res.ReplayBatch)
	case en.EditReplayedAs != "":
		fmt.Fprintf(w, "its edit %s was replayed as %s (no replay batch kept says what became of it: edihub fetch %s)\n",
			escape.Line(en.SupersededBy), escape.Line(en.EditReplayedAs), escape.Line(en.EditReplayedAs))
	case en.Superseded():
		fmt.Fprintf(w, "superseded by its edit %s: replaying %s sends the edit\n", escape.Line(en.SupersededBy), en.ID)
	}
	fmt.Fprintln(w, "headers:")
	printHeaders(w, en.Headers)
	if *raw {
		fmt.Fprintln(w, "payload (escaped bytes):")
		fmt.Fprintln(w, escape.Terminal(res.Payload))
		return nil
	}
	fmt.Fprintf(w, "payload (one segment a line: number, @byte offset; read as %s%s; controls escaped):\n", res.Segments.Charset, declaredBy(res.Segments.SyntaxID))
	res.Segments.Render(w)
	return nil
}

// declaredBy names the syntax identifier a payload's charset comes from.
func declaredBy(id string) string {
	if id == "" {
		return ""
	}
	return ", as its UNB declares " + id
}

// printResults prints park and drop outcomes and fails when any failed.
func printResults(s *session, verb string, res []ops.ActionResult) error {
	if s.json { // one object, as every other --json document
		if err := s.printJSON(map[string]any{"action": verb, "results": res}); err != nil {
			return err
		}
	}
	failed := 0
	for _, r := range res {
		switch {
		case !r.OK:
			failed++
			if !s.json {
				fmt.Fprintf(s.e.stdout, "%s  NOT %s: %s\n", r.ID, verb, escape.Text(r.Error))
			}
		case s.json:
		case r.NewID != "":
			fmt.Fprintf(s.e.stdout, "%s  %s → %s\n", r.ID, verb, r.NewID)
		default:
			fmt.Fprintf(s.e.stdout, "%s  %s (sha256 %s)\n", r.ID, verb, r.SHA256)
		}
	}
	if failed > 0 {
		return failedErr("%d of %d not %s", failed, len(res), verb)
	}
	return nil
}

func dlqPark(ctx context.Context, e *env, args []string) error {
	return dlqBulk(ctx, e, args, "park")
}

func dlqDrop(ctx context.Context, e *env, args []string) error {
	return dlqBulk(ctx, e, args, "drop")
}

// dlqBulk is park and drop: named IDs, or --filter with a replay's
// guards (--max, --dry-run, --reason required; every message audited
// with the filter).
func dlqBulk(ctx context.Context, e *env, args []string, action string) error {
	name, verb := "dlq "+action, map[string]string{"park": "parked", "drop": "dropped"}[action]
	usage := "ID... | --filter key=value,... [--max 100] [--dry-run] [--reason TEXT]"
	reasonHelp := "why, for the audit trail (required with --filter)"
	if action == "drop" {
		usage = "ID... | --filter key=value,... [--max 100] [--dry-run] --reason TEXT"
		reasonHelp = "why the message is destroyed (required; goes to the audit trail)"
	}
	fs := newFlagSet(e, name, usage)
	var of opsFlags
	of.register(fs, e)
	reason := fs.String("reason", "", reasonHelp)
	filter := fs.String("filter", "", action+" what matches: key=value,... (kind, stage, cause, partner, error-class, fingerprint, code, segment, since); DLQ unless it names a kind")
	maxN := fs.Int("max", ops.DefaultReplayMax, "with --filter: at most this many (no unlimited; run again for the rest)")
	dry := fs.Bool("dry-run", false, "say what would be "+verb+"; changes nothing")
	ids, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	req := ops.BulkRequest{IDs: ids, Max: *maxN, DryRun: *dry, Reason: *reason}
	switch {
	case *filter != "" && len(ids) > 0:
		return usageErr("name message IDs or --filter, not both")
	case *filter == "" && len(ids) == 0:
		return usageErr("name at least one message ID, or --filter")
	case *maxN < 1:
		return usageErr("--max %d: want at least 1 (there is no unlimited)", *maxN)
	case *filter != "":
		f, err := ops.ParseFilter(*filter)
		if err != nil {
			return usageErr("--filter: %v", err)
		}
		req.Filter = &f
	default:
		req.Max = max(req.Max, len(ids)) // named IDs are their own cap
	}
	if strings.TrimSpace(*reason) == "" {
		switch {
		case action == "drop":
			return usageErr("drop destroys evidence: --reason is required")
		case req.Filter != nil:
			return usageErr("park --filter acts on many messages: --reason is required")
		}
	}
	s, err := of.connectAs(e, "edihub-dlq", appendsOrAPI)
	if err != nil {
		return err
	}
	defer s.close()
	rb := s.act()
	if req.Filter == nil && !req.DryRun { // as before: one result per ID
		var res []ops.ActionResult
		if action == "park" {
			res, err = rb.Park(ctx, ids, *reason)
		} else {
			res, err = rb.Drop(ctx, ids, *reason)
		}
		if err != nil {
			return opsErr(err)
		}
		return printResults(s, verb, res)
	}
	var rep *ops.BulkReport
	if action == "park" {
		rep, err = rb.ParkMatching(ctx, req)
	} else {
		rep, err = rb.DropMatching(ctx, req)
	}
	if err != nil {
		return opsErr(err)
	}
	return printBulk(s, verb, rep)
}

// printBulk prints a park or drop by filter (or a dry run) and fails when
// any was not (or would not be) done.
func printBulk(s *session, verb string, rep *ops.BulkReport) error {
	w := s.e.stdout
	if s.json {
		if err := s.printJSON(rep); err != nil {
			return err
		}
	} else {
		for _, r := range rep.Results {
			switch {
			case !r.OK && rep.DryRun:
				fmt.Fprintf(w, "%s  would NOT be %s: %s\n", r.ID, verb, escape.Text(r.Error))
			case !r.OK:
				fmt.Fprintf(w, "%s  NOT %s: %s\n", r.ID, verb, escape.Text(r.Error))
			case rep.DryRun:
				fmt.Fprintf(w, "%s  would be %s\n", r.ID, verb)
			case r.NewID != "":
				fmt.Fprintf(w, "%s  %s → %s\n", r.ID, verb, r.NewID)
			default:
				fmt.Fprintf(w, "%s  %s (sha256 %s)\n", r.ID, verb, r.SHA256)
			}
		}
		done := verb
		if rep.DryRun {
			done = "would be " + verb + " (dry-run: nothing was changed)"
		}
		fmt.Fprintf(w, "matched %d, %s %d, failed %d", rep.Matched, done, rep.Done, rep.Failed)
		if rep.Left > 0 {
			fmt.Fprintf(w, "; %d more match — run again (or raise --max)", rep.Left)
		}
		fmt.Fprintln(w)
	}
	if rep.Failed > 0 {
		if rep.DryRun {
			return failedErr("%d of %d would not be %s", rep.Failed, len(rep.Results), verb)
		}
		return failedErr("%d of %d not %s", rep.Failed, len(rep.Results), verb)
	}
	return nil
}

func dlqEdit(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "dlq edit", "ID [--from-file F | opens $VISUAL/$EDITOR] [--reason TEXT] [--force]")
	from := fs.String("from-file", "", "the edited payload (- reads standard input); without it $VISUAL or $EDITOR opens a copy")
	reason := fs.String("reason", "", "what was changed and why, for the audit trail")
	force := fs.Bool("force", false, "store the edit even when the check (the decision of dlq replay --dry-run) says it would fail again")
	var of opsFlags
	of.register(fs, e)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("name exactly one message ID")
	}
	var edited []byte
	if *from != "" {
		if *from == "-" {
			edited, err = io.ReadAll(e.stdin)
		} else {
			edited, err = os.ReadFile(*from)
		}
		if err != nil {
			return usageErr("--from-file: %v", err)
		}
	} else if nonEmptyStr(e.getenv("VISUAL"), e.getenv("EDITOR")) == "" && !isTerminalReader(e.stdin) {
		// vi without a terminal hangs a script or garbles a pipe.
		return usageErr("no $VISUAL or $EDITOR is set and standard input is not a terminal: give the edited payload with --from-file FILE (or --from-file - to read standard input), or set $EDITOR")
	}
	s, err := of.connect(e, "edihub-dlq")
	if err != nil {
		return err
	}
	defer s.close()
	if edited == nil {
		orig, err := s.ops.Payload(ctx, pos[0])
		if err != nil {
			return opsErr(err)
		}
		if edited, err = editInEditor(e, orig); err != nil {
			return err
		}
		if bytes.Equal(orig, edited) {
			return failedErr("no change; nothing stored")
		}
	}
	if err := checkEdit(ctx, s, pos[0], edited, *force); err != nil {
		return err
	}
	res, err := s.ops.Edit(ctx, pos[0], edited, *reason)
	if errors.Is(err, ops.ErrNoChange) {
		return failedErr("no change; nothing stored")
	}
	if err != nil {
		return opsErr(err)
	}
	if s.json {
		return s.printJSON(res)
	}
	fmt.Fprintf(e.stdout, "%s edited into %s (sha256 %s → %s)\n", res.Original, res.Edited, res.Before[:12], res.After[:12])
	fmt.Fprintf(e.stdout, "both are kept; 'edihub dlq replay %s' (or %s) replays only the edited version\n", res.Original, res.Edited)
	return nil
}

// checkEdit runs the dry run of dlq replay on the edited payload before it
// is stored, and refuses an edit that would fail again unless forced.
func checkEdit(ctx context.Context, s *session, id string, edited []byte, force bool) error {
	d, err := s.ops.CheckEdit(ctx, id, edited)
	switch {
	case errors.Is(err, ops.ErrEmptyEdit):
		return failedErr("%v", err)
	case err != nil && force:
		fmt.Fprintf(s.e.stderr, "warning: the edit was not checked (%s); storing it as --force says\n", escape.Text(err.Error()))
		return nil
	case err != nil:
		return failedErr("cannot check the edit (%s); nothing stored (--force stores it unchecked)", escape.Text(err.Error()))
	case d.OK:
		fmt.Fprintf(s.e.stderr, "check: %s\n", escape.Text(d.Verdict))
		return nil
	case force:
		fmt.Fprintf(s.e.stderr, "warning: the edit %s; storing it as --force says\n", escape.Text(d.Verdict))
		return nil
	}
	return failedErr("the edit %s; nothing stored (fix it and edit again, or --force to store it anyway)", escape.Text(d.Verdict))
}

// editInEditor writes payload to a private temporary file, opens it in
// $VISUAL or $EDITOR (vi if neither is set) and returns what was saved.
// The file is removed afterwards: it may hold personal data.
func editInEditor(e *env, payload []byte) ([]byte, error) {
	editor := nonEmptyStr(e.getenv("VISUAL"), e.getenv("EDITOR"), "vi")
	argv := strings.Fields(editor)
	f, err := os.CreateTemp("", "edihub-edit-*.edi")
	if err != nil {
		return nil, failedErr("temporary file: %v", err)
	}
	path := f.Name()
	defer os.Remove(path)
	if _, err := f.Write(payload); err != nil {
		f.Close()
		return nil, failedErr("temporary file: %v", err)
	}
	if err := f.Close(); err != nil {
		return nil, failedErr("temporary file: %v", err)
	}
	cmd := exec.Command(argv[0], append(argv[1:], path)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, failedErr("editor %q: %v; nothing stored", escape.Line(editor), err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		return nil, failedErr("read the edited file: %v", err)
	}
	return out, nil
}

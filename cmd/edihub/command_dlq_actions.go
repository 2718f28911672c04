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
	fmt.Fprintln(w, "headers (escaped):")
	printHeaders(w, en.Headers)
	if *raw {
		fmt.Fprintln(w, "payload (escaped bytes):")
		fmt.Fprintln(w, escape.Terminal(res.Payload))
		return nil
	}
	fmt.Fprintf(w, "payload (one segment a line: number, @byte offset; escaped):\n")
	res.Segments.Render(w)
	return nil
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
	fs := newFlagSet(e, "dlq park", "ID... [--reason TEXT]")
	var of opsFlags
	of.register(fs, e)
	reason := fs.String("reason", "", "why, for the audit trail")
	ids, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usageErr("name at least one message ID")
	}
	s, err := of.connectAs(e, "edihub-dlq", appendsOrAPI)
	if err != nil {
		return err
	}
	defer s.close()
	res, err := s.act().Park(ctx, ids, *reason)
	if err != nil {
		return opsErr(err)
	}
	return printResults(s, "parked", res)
}

func dlqDrop(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "dlq drop", "ID... --reason TEXT")
	var of opsFlags
	of.register(fs, e)
	reason := fs.String("reason", "", "why the message is destroyed (required; goes to the audit trail)")
	ids, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usageErr("name at least one message ID")
	}
	if strings.TrimSpace(*reason) == "" {
		return usageErr("drop destroys evidence: --reason is required")
	}
	s, err := of.connectAs(e, "edihub-dlq", appendsOrAPI)
	if err != nil {
		return err
	}
	defer s.close()
	res, err := s.act().Drop(ctx, ids, *reason)
	if err != nil {
		return opsErr(err)
	}
	return printResults(s, "dropped", res)
}

func dlqEdit(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "dlq edit", "ID [--from-file F | opens $VISUAL/$EDITOR] [--reason TEXT]")
	var of opsFlags
	of.register(fs, e)
	from := fs.String("from-file", "", "the edited payload (- reads standard input); without it $VISUAL or $EDITOR opens a copy")
	reason := fs.String("reason", "", "what was changed and why, for the audit trail")
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

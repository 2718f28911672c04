package main

import (
	"context"
	"fmt"

	"github.com/edihub/edihub/escape"
)

// dlqReplays lists the replay batches, or shows one with each copy's
// outcome as the streams say it now (the live tally).
func dlqReplays(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "dlq replays", "[BATCH] [--limit 20]")
	var of opsFlags
	of.register(fs, e)
	limit := fs.Int("limit", 20, "list at most this many batches, newest first")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr("name at most one replay batch, e.g. R-20261201T031500Z-a1b2c3")
	}
	s, err := of.connectAs(e, "edihub-dlq", readsOnly)
	if err != nil {
		return err
	}
	defer s.close()
	w := e.stdout
	if len(pos) == 0 {
		bs, err := s.ops.ReplayBatches(ctx, *limit)
		if err != nil {
			return opsErr(err)
		}
		if s.json {
			return s.printJSON(map[string]any{"replays": bs})
		}
		if len(bs) == 0 {
			fmt.Fprintln(w, "no replay batches kept")
		}
		for _, b := range bs {
			fmt.Fprintf(w, "%s  %s  by %s  %d message(s): %s\n", b.ID, b.Time.Format("2006-01-02 15:04:05Z"), escape.Line(b.Operator), len(b.IDs), tallyLine(b.Tally))
		}
		return nil
	}
	b, err := s.ops.ReplayBatch(ctx, pos[0])
	if err != nil {
		return opsErr(err)
	}
	if s.json {
		return s.printJSON(b)
	}
	fmt.Fprintf(w, "%s  %s  by %s\n", b.ID, b.Time.Format("2006-01-02 15:04:05Z"), escape.Line(b.Operator))
	for _, it := range b.Items {
		id := it.ID
		if it.Version != "" {
			id += " (its edit " + it.Version + ")"
		}
		fmt.Fprintf(w, "%s → %s: replayed as %s%s\n", id, escape.Line(it.Subject), it.NewID, followed(it))
	}
	fmt.Fprintln(w, tallyLine(b.Tally))
	return nil
}

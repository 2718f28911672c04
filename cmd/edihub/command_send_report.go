package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub"
)

// printOutcomes says what the hub did with each stored file: every file
// that was not simply parsed by name, parsed ones by name only when the
// batch is printed line by line, then a tally.
func (s *sender) printOutcomes() {
	if s.json {
		return
	}
	tally := map[string]int{}
	const maxNotSeen = 10 // a busy or restarting hub: name a few, count the rest
	for i := range s.results {
		r := &s.results[i]
		if !r.OK {
			continue
		}
		tally[r.Outcome]++
		file := escape.Line(r.File)
		switch r.Outcome {
		case client.OutcomeParsed:
			if s.bar == nil {
				fmt.Fprintf(s.e.stdout, "parsed: %s → %s\n", file, escape.Line(r.Where))
			}
		case client.OutcomeDuplicate:
			fmt.Fprintf(s.e.stdout, "duplicate: %s — %s had sent this interchange before (%s); the hub acked it without processing it again\n",
				file, s.o.Partner, escape.Text(strings.Trim(r.Detail, "[]")))
		case client.OutcomeDeadLettered:
			fmt.Fprintf(s.e.stdout, "dead-lettered: %s → %s: %s (see: edihub dlq ls)\n", file, escape.Line(r.Where), escape.Text(r.Detail))
		case client.OutcomeQuarantined:
			fmt.Fprintf(s.e.stdout, "quarantined: %s → %s: %s (see: edihub poison ls)\n", file, escape.Line(r.Where), escape.Text(r.Detail))
		case client.OutcomeRetrying:
			fmt.Fprintf(s.e.stdout, "retrying: %s → %s: %s\n", file, escape.Line(r.Where), escape.Text(r.Detail))
		case client.OutcomeAlreadyStored:
			if s.bar != nil { // otherwise its "sent" line said so
				fmt.Fprintf(s.e.stdout, "already stored: %s (the server dropped this re-send of the same bytes)\n", file)
			}
		case client.OutcomeNotSeen:
			if tally[client.OutcomeNotSeen] > maxNotSeen {
				continue
			}
			fmt.Fprintf(s.e.stdout, "no verdict yet: %s (nothing heard within %s; see: edihub dlq ls, edihub audit ls --action duplicate-skipped)\n", file, s.o.Outcome)
		}
	}
	if n := tally[client.OutcomeNotSeen]; n > maxNotSeen {
		fmt.Fprintf(s.e.stdout, "no verdict yet: %d more files\n", n-maxNotSeen)
	}
	if tally[client.OutcomeNotSeen] > 0 {
		s.sayIfPaused()
	}
	if len(s.results) > 1 && len(tally) > 0 {
		var parts []string
		for _, k := range []string{client.OutcomeParsed, client.OutcomeDuplicate, client.OutcomeDeadLettered, client.OutcomeQuarantined, client.OutcomeRetrying, client.OutcomeAlreadyStored, client.OutcomeNotSeen} {
			if tally[k] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", tally[k], strings.ReplaceAll(k, "-", " ")))
			}
		}
		fmt.Fprintf(s.e.stdout, "hub: %s\n", strings.Join(parts, ", "))
	}
}

// report prints the totals (one JSON document under --json) and returns
// the command's error: exit 2 when send gave up waiting for the hub, 1
// when a file failed, 0 when every file is stored.
func (s *sender) report(gaveUp error) error {
	stored, failed, unknown, notSent := s.count(client.StatusStored), s.count(client.StatusFailed), s.count(client.StatusUnknown), s.count(client.StatusNotSent)
	again := 0
	for _, r := range s.results {
		if r.Outcome == client.OutcomeAlreadyStored {
			again++
		}
	}
	n := len(s.results)
	if s.json {
		doc := map[string]any{"files": s.results, "stored": stored, "sent": stored, "already_stored": again,
			"failed": failed, "unknown": unknown, "not_sent": notSent, "outages": s.link.Outages()}
		if gaveUp != nil {
			doc["error"], doc["exit_code"] = gaveUp.Error(), exitUsage
		}
		b, _ := escape.JSON(doc)
		fmt.Fprintln(s.e.stdout, string(b))
	} else if n > 1 || stored < n || s.link.Outages() > 0 {
		line := fmt.Sprintf("stored %d of %d files", stored, n)
		if again > 0 {
			line += fmt.Sprintf(" (%d already stored before: re-sends the server dropped)", again)
		}
		for _, p := range []struct {
			n    int
			what string
		}{{failed, "failed"}, {unknown, "maybe stored (sent, but no ack came; re-sending is safe)"}, {notSent, "not sent"}} {
			if p.n > 0 {
				line += fmt.Sprintf(", %d %s", p.n, p.what)
			}
		}
		if k := s.link.Outages(); k > 0 {
			line += fmt.Sprintf("; the hub went away %d time(s) during the batch", k)
		}
		fmt.Fprintln(s.e.stderr, line)
	}
	switch {
	case errors.Is(gaveUp, context.Canceled):
		return failedErr("stopped: %d of %d files stored; sending the same files again is safe", stored, n)
	case gaveUp != nil:
		return unreachableErr(fmt.Errorf("%v: %d of %d files stored; send the same files again when the hub is back (the ones it has are dropped as duplicates)", gaveUp, stored, n))
	case failed > 0:
		return failedErr("%d of %d files were not stored", failed, n)
	}
	return nil
}

// sayIfPaused tells why files got no verdict when the bulkhead has paused
// their partner: they wait in INGEST, parked, until an operator resumes
// it, and nothing else would say so. The pause bucket under its default
// name; a client that may not read it (a partner's account) says nothing.
func (s *sender) sayIfPaused() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	store, err := hub.BindPauses(ctx, s.j, hub.DefaultPauseBucket)
	if err != nil {
		return
	}
	p, paused, err := store.Paused(ctx, s.o.Partner)
	if err != nil || !paused {
		return
	}
	fmt.Fprintf(s.e.stdout, "partner %s is paused by the bulkhead since %s: its files wait in INGEST and run, in order, after edihub partner resume %s --reason TEXT (see: edihub partner paused)\n",
		escape.Line(s.o.Partner), p.At.UTC().Format(time.RFC3339), escape.Line(s.o.Partner))
}

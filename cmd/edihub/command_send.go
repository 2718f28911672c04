package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

func init() {
	register(command{name: "send", summary: "publish interchanges to edi.ingest.<partner>", run: runSend})
}

// sendOptions is what send does, from its flags. Another file's flag adds
// itself with one line in runSend (see Prepare).
type sendOptions struct {
	Partner string
	Timeout time.Duration // per ack
	Wait    time.Duration // how long one outage of the hub is waited out
	Outcome time.Duration // how long to wait for the hub's verdicts (0: don't)
	// Prepare hooks run on every message after send set its headers and
	// Nats-Msg-Id, before it is published (e.g. a signature header).
	Prepare []func(*nats.Msg) error
}

func runSend(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "send", "--partner ID FILE... (- reads standard input)")
	var cf clientFlags
	cf.register(fs, e)
	var o sendOptions
	fs.StringVar(&o.Partner, "partner", "", "partner ID (one subject token, e.g. ACME)")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Second, "how long to wait for the server's ack of each file")
	fs.DurationVar(&o.Wait, "wait", 2*time.Minute, "how long to wait for the hub when it goes away mid-batch, then exit 2")
	fs.DurationVar(&o.Outcome, "outcome", 5*time.Second, "how long to wait for the hub to parse, dead-letter or skip the files (0: don't wait)")
	signKey := fs.String("sign-key", "", "sign each file with this Ed25519 key file (x-signature, x-signature-key; edihub partner keygen)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := wire.ValidPartnerID(o.Partner); err != nil {
		return usageErr("--partner %s: %v", escape.Line(o.Partner), err)
	}
	if fs.NArg() == 0 {
		return usageErr("name at least one file to send")
	}
	// A file that is not there is a usage mistake, said before anything is
	// sent (as edifact check does), not a send that failed.
	for _, f := range fs.Args() {
		if f == "-" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return usageErr("%s: %v", escape.Line(f), errors.Unwrap(err))
		}
	}
	sign, err := loadSignKey(*signKey, o.Partner)
	if err != nil {
		return err
	}
	o.Prepare = append(o.Prepare, func(m *nats.Msg) error { sign(m.Header, m.Data); return nil })
	return sendFiles(ctx, e, &cf, o, fs.Args())
}

// sendFiles connects and sends files with o (the seam tests use to run
// send with their own Prepare hooks).
func sendFiles(ctx context.Context, e *env, cf *clientFlags, o sendOptions, files []string) error {
	link := client.NewLink()
	nc, j, err := cf.connect("edihub-send", link.Options()...)
	if err != nil {
		return hubDownErr(err)
	}
	defer nc.Close()
	link.Bind(nc)
	s := &sender{e: e, o: o, j: j, link: link, json: cf.json, tty: isTerminal(e.stderr)}
	return s.run(ctx, nc, files)
}

type sender struct {
	e       *env
	o       sendOptions
	j       js.JetStream
	link    *client.Link
	json    bool
	tty     bool
	bar     *progressBar
	outage  time.Time // when the current outage began; zero while the hub answers
	results []client.Result
}

func (s *sender) run(ctx context.Context, nc *nats.Conn, files []string) error {
	started := time.Now()
	var watch *client.Watch
	if s.o.Outcome > 0 {
		w, err := client.WatchOutcomes(nc, s.o.Partner)
		if err != nil {
			fmt.Fprintf(s.e.stderr, "warning: cannot follow the hub's verdicts (%s); files are still sent\n", escape.Text(oneLine(err.Error())))
		} else {
			watch = w
			defer w.Stop()
		}
	}
	if s.tty && len(files) > 1 && !s.json {
		s.bar = newProgressBar(s.e.stderr, len(files))
	}
	s.results = make([]client.Result, len(files))
	failed := 0
	var gaveUp error
	for i, f := range files {
		r := &s.results[i]
		r.File = f
		if gaveUp != nil {
			r.Status = client.StatusNotSent
			continue
		}
		gaveUp = s.sendOne(ctx, r, i, len(files))
		if r.Status == client.StatusFailed {
			failed++
		}
		s.printResult(r)
		if s.bar != nil {
			s.bar.update(i+1, failed, i+1 == len(files))
		}
	}
	if s.bar != nil {
		s.bar.finish(s.count(client.StatusStored)+failed, failed)
	}
	if watch != nil && gaveUp == nil {
		if s.count(client.StatusStored) > 0 && !s.json && s.tty {
			fmt.Fprintf(s.e.stderr, "waiting up to %s for the hub's verdicts (--outcome 0 skips this)…\r", s.o.Outcome)
		}
		watch.Wait(ctx, s.results, s.o.Outcome)
		// Events are best effort: what they missed, the streams say (if
		// this user may read them; a partner may not).
		_ = client.ResolveFromStreams(ctx, s.j, started, s.results)
		if !s.json && s.tty {
			fmt.Fprint(s.e.stderr, "\r\x1b[K")
		}
		s.printOutcomes()
	}
	return s.report(gaveUp)
}

// sendOne reads and publishes one file, waiting out outages of the hub. A
// non-nil error means send gave up on the hub (--wait ran out).
func (s *sender) sendOne(ctx context.Context, r *client.Result, i, n int) error {
	var data []byte
	var err error
	if r.File == "-" {
		data, err = io.ReadAll(s.e.stdin)
	} else {
		data, err = os.ReadFile(r.File)
	}
	if err != nil {
		r.Status, r.Error = client.StatusFailed, err.Error()
		return nil
	}
	msg := client.NewMessage(s.o.Partner, r.File, data, r)
	for _, prepare := range s.o.Prepare {
		if err := prepare(msg); err != nil {
			r.Status, r.Error = client.StatusFailed, err.Error()
			return nil
		}
	}
	client.Signed(s.o.Partner, msg, r)
	tried := false
	for {
		// over the server's limit: uploaded in chunks, then announced
		ack, chunks, res, err := client.Send(ctx, s.j, s.link, s.o.Partner, msg, s.o.Timeout)
		switch res {
		case client.Published:
			if !s.outage.IsZero() {
				s.outage = time.Time{}
			}
			r.OK, r.Status, r.Stream, r.Seq, r.Chunks = true, client.StatusStored, ack.Stream, ack.Sequence, chunks
			if ack.Duplicate {
				r.Outcome = client.OutcomeAlreadyStored
			}
			return nil
		case client.Refused:
			if ctx.Err() != nil { // Ctrl-C while waiting for the ack
				r.Status, r.Error = client.StatusUnknown, "stopped before the server's ack: it may be stored; re-sending is safe"
				return ctx.Err()
			}
			r.Status, r.Error = client.StatusFailed, oneLine(err.Error())
			return nil
		}
		if s.outage.IsZero() {
			s.outage = time.Now()
			text := fmt.Sprintf("hub not answering (%s)", escape.Text(oneLine(err.Error())))
			if !s.link.Connected() {
				text = lostText(s.link)
			}
			s.say(fmt.Sprintf("%s while sending %s (file %d of %d); waiting for it\n", text, escape.Line(r.File), i+1, n))
		}
		if !errors.Is(err, client.ErrNotConnected) {
			tried = true
		}
		if werr := waitForHub(ctx, s.link, s.outage, s.o.Wait, s.tty && !s.json, s.say); werr != nil {
			r.Status = client.StatusNotSent
			if tried {
				r.Status, r.Error = client.StatusUnknown, "sent, but the hub went away before acking it: it may be stored; re-sending is safe"
			}
			return werr
		}
	}
}

// say prints a line about the batch (outages) on stderr, clearing the bar.
func (s *sender) say(text string) {
	if s.json {
		return
	}
	if s.bar != nil && !strings.HasPrefix(text, "\r") {
		s.bar.clear()
	}
	fmt.Fprint(s.e.stderr, text)
}

func (s *sender) printResult(r *client.Result) {
	switch {
	case s.json:
	case r.Status == client.StatusFailed:
		s.say(fmt.Sprintf("FAIL %s: %s\n", escape.Line(r.File), escape.Text(r.Error)))
	case r.Status != client.StatusStored || s.bar != nil:
	case r.Outcome == client.OutcomeAlreadyStored:
		fmt.Fprintf(s.e.stdout, "sent %s (%d bytes) → %s seq %d (already stored: the server dropped this re-send)\n", escape.Line(r.File), r.Bytes, escape.Line(r.Stream), r.Seq)
	case r.Chunks > 0:
		fmt.Fprintf(s.e.stdout, "sent %s (%d bytes, over the server's limit: uploaded in %d chunks) → %s seq %d\n", escape.Line(r.File), r.Bytes, r.Chunks, escape.Line(r.Stream), r.Seq)
	default:
		fmt.Fprintf(s.e.stdout, "sent %s (%d bytes) → %s seq %d\n", escape.Line(r.File), r.Bytes, escape.Line(r.Stream), r.Seq)
	}
}

func (s *sender) count(status string) int {
	n := 0
	for _, r := range s.results {
		if r.Status == status {
			n++
		}
	}
	return n
}

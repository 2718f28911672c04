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
	"github.com/nats-io/nuid"

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

// Status of a file.
const (
	statusStored  = "stored"   // the server acked it
	statusFailed  = "failed"   // unreadable, or the server refused it
	statusUnknown = "unknown"  // sent, then the hub went away before its ack: maybe stored
	statusNotSent = "not-sent" // send gave up before this file
)

type sendResult struct {
	File          string `json:"file"`
	OK            bool   `json:"ok"`
	Status        string `json:"status"`
	Stream        string `json:"stream,omitempty"`
	Seq           uint64 `json:"seq,omitempty"`
	Bytes         int    `json:"bytes"`
	MsgID         string `json:"msg_id,omitempty"`
	CorrelationID string `json:"correlation_id,omitempty"`
	Outcome       string `json:"outcome,omitempty"`
	Where         string `json:"where,omitempty"`
	Detail        string `json:"detail,omitempty"`
	Error         string `json:"error,omitempty"`
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
	link := newHubLink()
	nc, j, err := cf.connect("edihub-send", link.options()...)
	if err != nil {
		return hubDownErr(err)
	}
	defer nc.Close()
	s := &sender{e: e, o: o, j: j, link: link, json: cf.json, tty: isTerminal(e.stderr)}
	return s.run(ctx, nc, files)
}

type sender struct {
	e       *env
	o       sendOptions
	j       js.JetStream
	link    *hubLink
	json    bool
	tty     bool
	bar     *progressBar
	outage  time.Time // when the current outage began; zero while the hub answers
	results []sendResult
}

func (s *sender) run(ctx context.Context, nc *nats.Conn, files []string) error {
	var watch *outcomeWatch
	if s.o.Outcome > 0 {
		w, err := watchOutcomes(nc, s.o.Partner)
		if err != nil {
			fmt.Fprintf(s.e.stderr, "warning: cannot follow the hub's verdicts (%s); files are still sent\n", escape.Text(oneLine(err.Error())))
		} else {
			watch = w
			defer w.stop()
		}
	}
	if s.tty && len(files) > 1 && !s.json {
		s.bar = newProgressBar(s.e.stderr, len(files))
	}
	s.results = make([]sendResult, len(files))
	failed := 0
	var gaveUp error
	for i, f := range files {
		r := &s.results[i]
		r.File = f
		if gaveUp != nil {
			r.Status = statusNotSent
			continue
		}
		gaveUp = s.sendOne(ctx, r, i, len(files))
		if r.Status == statusFailed {
			failed++
		}
		s.printResult(r)
		if s.bar != nil {
			s.bar.update(i+1, failed, i+1 == len(files))
		}
	}
	if s.bar != nil {
		s.bar.finish(s.count(statusStored)+failed, failed)
	}
	if watch != nil && gaveUp == nil {
		if s.count(statusStored) > 0 && !s.json && s.tty {
			fmt.Fprintf(s.e.stderr, "waiting up to %s for the hub's verdicts (--outcome 0 skips this)…\r", s.o.Outcome)
		}
		watch.wait(ctx, s.results, s.o.Outcome)
		if !s.json && s.tty {
			fmt.Fprint(s.e.stderr, "\r\x1b[K")
		}
		s.printOutcomes()
	}
	return s.report(gaveUp)
}

// sendOne reads and publishes one file, waiting out outages of the hub. A
// non-nil error means send gave up on the hub (--wait ran out).
func (s *sender) sendOne(ctx context.Context, r *sendResult, i, n int) error {
	var data []byte
	var err error
	if r.File == "-" {
		data, err = io.ReadAll(s.e.stdin)
	} else {
		data, err = os.ReadFile(r.File)
	}
	if err != nil {
		r.Status, r.Error = statusFailed, err.Error()
		return nil
	}
	r.Bytes = len(data)
	r.CorrelationID = nuid.Next()
	r.MsgID = wire.SendMsgID(s.o.Partner, data)
	msg := &nats.Msg{Subject: wire.IngestSubject(s.o.Partner), Data: data, Header: nats.Header{}}
	msg.Header.Set(wire.HdrCorrelationID, r.CorrelationID)
	msg.Header.Set(js.MsgIDHeader, r.MsgID)
	if r.File != "-" {
		msg.Header.Set(wire.HdrFilename, escape.Header(r.File))
	}
	for _, prepare := range s.o.Prepare {
		if err := prepare(msg); err != nil {
			r.Status, r.Error = statusFailed, err.Error()
			return nil
		}
	}
	if sig := msg.Header.Get(wire.HdrSignature); sig != "" {
		r.MsgID = wire.SignedSendMsgID(s.o.Partner, data, sig)
		msg.Header.Set(js.MsgIDHeader, r.MsgID)
	}
	tried := false
	for {
		ack, res, err := publish(ctx, s.j, s.link, msg, s.o.Timeout)
		switch res {
		case published:
			if !s.outage.IsZero() {
				s.outage = time.Time{}
			}
			r.OK, r.Status, r.Stream, r.Seq = true, statusStored, ack.Stream, ack.Sequence
			if ack.Duplicate {
				r.Outcome = outcomeAlreadyStored
			}
			return nil
		case refused:
			if ctx.Err() != nil { // Ctrl-C while waiting for the ack
				r.Status, r.Error = statusUnknown, "stopped before the server's ack: it may be stored; re-sending is safe"
				return ctx.Err()
			}
			r.Status, r.Error = statusFailed, oneLine(err.Error())
			return nil
		}
		if s.outage.IsZero() {
			s.outage = time.Now()
			text := fmt.Sprintf("hub not answering (%s)", escape.Text(oneLine(err.Error())))
			if !s.link.connected() {
				text = s.link.lostText()
			}
			s.say(fmt.Sprintf("%s while sending %s (file %d of %d); waiting for it\n", text, escape.Line(r.File), i+1, n))
		}
		if !errors.Is(err, errNotConnected) {
			tried = true
		}
		if werr := waitForHub(ctx, s.link, s.outage, s.o.Wait, s.tty && !s.json, s.say); werr != nil {
			r.Status = statusNotSent
			if tried {
				r.Status, r.Error = statusUnknown, "sent, but the hub went away before acking it: it may be stored; re-sending is safe"
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

func (s *sender) printResult(r *sendResult) {
	switch {
	case s.json:
	case r.Status == statusFailed:
		s.say(fmt.Sprintf("FAIL %s: %s\n", escape.Line(r.File), escape.Text(r.Error)))
	case r.Status != statusStored || s.bar != nil:
	case r.Outcome == outcomeAlreadyStored:
		fmt.Fprintf(s.e.stdout, "sent %s (%d bytes) → %s seq %d (already stored: the server dropped this re-send)\n", escape.Line(r.File), r.Bytes, escape.Line(r.Stream), r.Seq)
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

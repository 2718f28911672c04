package main

import (
	"context"
	"fmt"
	"github.com/edihub/edihub/app"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/forensics"
	"github.com/edihub/edihub/hub/ops"
)

// poisonShow is `poison show --json`: the report, its ticket and the
// payload both as the runbook's one segment view (as `dlq show` prints it)
// and byte for byte (base64 by encoding/json).
type poisonShow struct {
	Report   *forensics.Report `json:"report"`
	Ticket   *forensics.Ticket `json:"ticket,omitempty"`
	Segments ops.SegmentView   `json:"segments"`
	Payload  []byte            `json:"payload"`
}

func (p *poisonCmd) show(ctx context.Context, id string, rows int) error {
	r, err := p.store.Report(ctx, id)
	if err != nil {
		return err
	}
	payload, err := p.store.Payload(ctx, r)
	if err != nil {
		return err
	}
	t, _ := p.store.Ticket(ctx, r.Ticket)       // a report without a ticket is still worth showing
	view := ops.Segments(payload, rows, 64<<10) // as dlq show bounds it
	if p.cf.json {
		return p.printJSON(poisonShow{Report: r, Ticket: t, Segments: view, Payload: payload})
	}
	printReport(p.e.stdout, r, t)
	fmt.Fprintf(p.e.stdout, "\npayload: %d bytes, sha256 %s (control characters and escapes shown as \\xHH)\n", len(payload), r.PayloadSHA256)
	view.Render(p.e.stdout)
	return nil
}

// printReport writes a report for people: the ticket, the report's
// fields (forensics.Report.Fields, as the console shows them), the stack
// and the child's output preformatted, and the headers last. Every string
// that may come from the payload, the child or a producer is escaped:
// error texts quote hostile input, and stderr is whatever the child
// printed.
func printReport(w io.Writer, r *forensics.Report, t *forensics.Ticket) {
	esc := func(s string) string { return escape.Text(s) }
	fmt.Fprintf(w, "%s  report %s\n", r.ID, esc(forensics.ReportObject(r.Key)))
	if t != nil {
		fmt.Fprintf(w, "ticket  %s: %s\n", escape.Line(t.ID), escape.Line(t.State))
		for _, n := range t.Notes {
			fmt.Fprintf(w, "          %s %s %s: %s\n", n.At.Local().Format("2006-01-02 15:04:05"), esc(n.Actor), n.Action, esc(n.Text))
		}
	}
	fmt.Fprintln(w)
	for _, f := range r.Fields() {
		fmt.Fprintf(w, "%-9s %s\n", f.Name, esc(f.Value))
	}
	if sb := r.Sandbox; sb != nil {
		block(w, "stack", sb.Stack, 60)
		block(w, "child output (head and tail)", sb.Stderr, 30)
	}
	keys := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "\nheaders of the poison copy")
	for _, k := range keys {
		fmt.Fprintf(w, "  %s: %s\n", esc(k), esc(nats.Header(r.Headers).Get(k)))
	}
}

// block prints a multi-line text indented and escaped, at most max lines.
func block(w io.Writer, title, text string, max int) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	lines := strings.Split(escape.Lines(text), "\n")
	fmt.Fprintf(w, "\n%s\n", title)
	for i, l := range lines {
		if i == max {
			fmt.Fprintf(w, "  … %d more lines (--json for all)\n", len(lines)-max)
			break
		}
		fmt.Fprintf(w, "  %s\n", l)
	}
}

func (p *poisonCmd) reanalyse(ctx context.Context, nc *nats.Conn, id string) error {
	f, err := forensics.New(forensics.Options{Conn: nc, Config: p.cfg.Sandbox, EDIFACT: p.cfg.Parse,
		Logger: quietLogger(p.e), Actor: app.ActorName("edihub-poison"), Keyring: p.keys})
	if err != nil {
		return usageErr("%v", err)
	}
	// A hang runs until the CPU cap (or the wall timeout) stops it: say
	// so first, then show that it is still running.
	stop := p.reanalyseProgress(id)
	r, err := f.Reanalyse(ctx, id)
	stop()
	if err != nil {
		return err
	}
	if p.cf.json {
		return p.printJSON(r)
	}
	fmt.Fprintf(p.e.stdout, "%s analysed again (%d times now): %s\n%s\n", r.ID, r.Analyses, r.Sandbox.Outcome, escape.Line(r.Sandbox.Summary))
	return nil
}

// reanalyseProgress prints, on stderr, what the sandbox is allowed and
// then the elapsed time every few seconds (one updated line on a
// terminal), until stop is called.
func (p *poisonCmd) reanalyseProgress(id string) (stop func()) {
	if p.cf.json {
		return func() {}
	}
	c := p.cfg.Sandbox
	c.SetDefaults()
	fmt.Fprintf(p.e.stderr, "analysing %s in the sandbox (caps: %s CPU, %s memory, %s wall): a hang or a loop runs until a cap stops it\n",
		escape.Line(id), durMS(c.CPULimit), c.MemoryLimit, durMS(c.Timeout))
	tty := isTerminal(p.e.stderr)
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		every := 5 * time.Second
		if tty {
			every = time.Second
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				if tty {
					fmt.Fprint(p.e.stderr, "\r\x1b[K")
				}
				return
			case <-t.C:
				text := fmt.Sprintf("still analysing: %s of at most %s", time.Since(start).Round(time.Second), durMS(c.Timeout))
				if tty {
					fmt.Fprint(p.e.stderr, "\r\x1b[K"+text)
				} else {
					fmt.Fprintln(p.e.stderr, text)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// quietLogger logs only warnings and errors, to stderr: the CLI's stdout
// is for its result.
func quietLogger(e *env) zerolog.Logger {
	return zerolog.New(zerolog.ConsoleWriter{Out: e.stderr, NoColor: true}).Level(zerolog.WarnLevel).With().Timestamp().Logger()
}

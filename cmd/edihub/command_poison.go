package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/forensics"
)

func init() {
	register(command{name: "poison", summary: "quarantined messages: ls, show, reanalyse, ticket ack|close", run: runPoison})
}

const poisonUsage = `Usage: edihub poison <subcommand> [flags]

  ls                                       quarantined messages with their analysis and ticket
  show ID [--rows N]                       the forensic report, the ticket and the payload
  reanalyse ID                             run the sandbox again on the stored payload
  ticket ack|close ID --note TEXT          move the ticket on (audited)

IDs are POISON:<seq> (the poison stream's sequence), a report key
(INGEST/42) or a ticket ID (T-INGEST-42). 'edihub poison <subcommand> -h'
lists its flags.
`

// poisonSubUsage is the usage line of one subcommand.
var poisonSubUsage = map[string]string{
	"poison ls": "[--json]", "poison show": "ID [--rows N] [--json]", "poison reanalyse": "ID [--json]",
	"poison ticket ack": "ID --note TEXT [--actor NAME]", "poison ticket close": "ID --note TEXT [--actor NAME]",
}

// poisonCmd holds what every poison subcommand shares.
type poisonCmd struct {
	e     *env
	cf    clientFlags
	cfg   sandboxFile
	js    js.JetStream
	store *forensics.Store
	keys  *audit.Keyring
}

func runPoison(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "help" {
		fmt.Fprint(e.stderr, poisonUsage)
		if len(args) == 0 {
			return usageErr("")
		}
		return errHelp
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "ls", "show", "reanalyse", "reanalyze":
		return runPoisonSub(ctx, e, sub, rest, "")
	case "ticket":
		if len(rest) > 0 && (rest[0] == "-h" || rest[0] == "--help" || rest[0] == "help") {
			fmt.Fprintln(e.stderr, "Usage: edihub poison ticket ack|close ID --note TEXT [--actor NAME]")
			return errHelp
		}
		if len(rest) == 0 || (rest[0] != "ack" && rest[0] != "close") {
			return usageErr("usage: edihub poison ticket ack|close ID --note TEXT [--actor NAME]")
		}
		return runPoisonSub(ctx, e, "ticket", rest[1:], rest[0])
	}
	return usageErr("unknown subcommand %q (%s)", sub, "ls, show, reanalyse, ticket")
}

func runPoisonSub(ctx context.Context, e *env, sub string, args []string, action string) error {
	name := "poison " + strings.TrimSpace(sub+" "+action)
	p := &poisonCmd{e: e}
	fs := newFlagSet(e, name, poisonSubUsage[name])
	p.cf.register(fs, e)
	configPath := fs.String("config", "", "YAML config file (the sandbox: section names the buckets and limits)")
	note := fs.String("note", "", "ticket: why (required; goes to the ticket and the audit trail)")
	actor := fs.String("actor", "", "ticket: who acts (default: the OS user)")
	rows := fs.Int("rows", 400, "show: payload lines to print at most")
	var data dataFlag
	data.register(fs)
	// Flags may come after the ID (edihub poison show POISON:3 --json).
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	wantIDs := 1
	if sub == "ls" {
		wantIDs = 0
	}
	if len(pos) != wantIDs {
		return usageErr("%s takes %d ID(s), got %d", name, wantIDs, len(pos))
	}
	var err error
	if p.cfg, err = loadSandboxConfig(*configPath); err != nil {
		return usageErr("%v", err)
	}
	if sub == "ticket" || sub == "reanalyse" {
		if p.keys, err = cliKeyring(e, data.resolve(p.cfg.DataDir)); err != nil {
			return err
		}
	}
	nc, j, err := p.cf.connect("edihub-poison")
	if err != nil {
		return hubDownErr(err)
	}
	defer nc.Close()
	p.js = j
	if p.store, err = forensics.OpenStore(ctx, j, p.cfg.Sandbox, false); err != nil {
		return unreachableErr(err)
	}
	switch sub {
	case "ls":
		err = p.ls(ctx)
	case "show":
		err = p.show(ctx, pos[0], *rows)
	case "ticket":
		err = p.ticket(ctx, pos[0], action, *note, *actor)
	default:
		err = p.reanalyse(ctx, nc, pos[0])
	}
	return mapForensicErr(err)
}

// mapForensicErr: a missing ID or a refused transition is "what it
// checked failed" (1); anything else is the hub being unreachable (2).
func mapForensicErr(err error) error {
	var ee *exitError
	switch {
	case err == nil || errors.As(err, &ee):
		return err
	case errors.Is(err, forensics.ErrNotFound), errors.Is(err, forensics.ErrInvalidTransition):
		return failedErr("%v", err)
	}
	return unreachableErr(err)
}

func (p *poisonCmd) printJSON(v any) error {
	enc := json.NewEncoder(escape.JSONWriter(p.e.stdout))
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (p *poisonCmd) ls(ctx context.Context) error {
	list, err := p.store.List(ctx)
	if err != nil {
		return err
	}
	if p.cf.json {
		if list == nil {
			list = []forensics.PoisonEntry{}
		}
		return p.printJSON(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(p.e.stdout, "no quarantined messages")
		return nil
	}
	esc := func(s string) string { return escape.Line(s) }
	tw := tabwriter.NewWriter(p.e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPARTNER\tSTAGE\tQUARANTINED\tBYTES\tOUTCOME\tTICKET\tSTATE")
	for _, x := range list {
		at := "-"
		if !x.QuarantinedAt.IsZero() {
			at = x.QuarantinedAt.Local().Format("2006-01-02 15:04:05")
		}
		state := x.TicketState
		switch {
		case x.ReplayedAs != "":
			state += " (replayed as " + x.ReplayedAs + ")"
		case !x.InStream:
			state += " (copy gone: dropped or aged out)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", x.ID, esc(x.Partner), esc(x.Stage), at, x.Bytes, esc(x.Outcome), x.Ticket, state)
	}
	return tw.Flush()
}

func (p *poisonCmd) ticket(ctx context.Context, id, action, note, actor string) error {
	if strings.TrimSpace(note) == "" {
		return usageErr("--note is required: say why (it goes to the ticket and the audit trail)")
	}
	if actor == "" {
		actor = osUser()
	}
	t, err := p.store.TransitionTicket(ctx, id, action, actor, note, audit.New(p.js, p.cfg.Sandbox.AuditStream, audit.WithKeyring(p.keys), audit.Signed()))
	if err != nil {
		return err
	}
	if p.cf.json {
		return p.printJSON(t)
	}
	fmt.Fprintf(p.e.stdout, "ticket %s is %s (%s by %s: %s)\n", t.ID, t.State, action, escape.Line(actor), escape.Line(note))
	return nil
}

// osUser is the audit actor when --actor is not given.
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

func durMS(d time.Duration) string { return d.Round(time.Millisecond).String() }

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/edihub/edihub/app"
	"io"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/wire"
)

func init() {
	register(command{name: "dlq", summary: "triage dead letters, parked and poison messages: ls, inspect, show, replay, park, drop, edit", run: runDLQ})
}

const dlqUsage = `Usage: edihub dlq <subcommand> [flags]

  ls                         counts by kind, stage, cause, partner and age
  inspect [filter flags]     the matching messages (--group: by stage, cause, error code, segment)
  show ID                    headers and payload, escaped, one segment a line (audited)
  replay ID... | --filter F  publish back to edi.ingest.<partner> (or --to edi.ingest.<other>), paced and capped
  replays [BATCH]            replay batches, or one batch with what became of each copy
  park ID... | --filter F    move to edi.<stage>.parking-lot until someone decides (--dry-run, --max)
  drop ID... | --filter F    delete for good, --reason required (audited with the payload's hash)
  edit ID [--from-file F]    store an edited version; only it is replayed

IDs are STREAM:SEQ, e.g. DLQ:1234, PARKING:7, POISON:3. Every subcommand takes
--server, --json, --actor and --config; 'edihub dlq <sub> -h' lists its flags.
Exit codes: 0 done, 1 something was not done (see the report), 2 bad usage or
the hub cannot be reached.
`

func runDLQ(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(e.stderr, dlqUsage)
		if len(args) == 0 {
			return &exitError{code: exitUsage, err: errors.New("")}
		}
		return errHelp
	}
	sub, rest := args[0], args[1:]
	f, ok := dlqSubcommands[sub]
	if !ok {
		return usageErr("unknown subcommand %q (ls, inspect, show, replay, replays, park, drop, edit)", sub)
	}
	return f(ctx, e, rest)
}

var dlqSubcommands = map[string]func(context.Context, *env, []string) error{
	"ls": dlqLs, "inspect": dlqInspect, "show": dlqShow, "replay": dlqReplay,
	"park": dlqPark, "drop": dlqDrop, "edit": dlqEdit, "replays": dlqReplays,
}

// opsFlags are the flags of every dlq and audit subcommand.
type opsFlags struct {
	clientFlags
	actor  string
	config string
	data   dataFlag
	api    apiFlags
}

func (f *opsFlags) register(fs *flag.FlagSet, e *env) {
	f.clientFlags.register(fs, e)
	shared(fs, func() {
		fs.StringVar(&f.actor, "actor", "", "who acts, for the audit trail (default $USER)")
		fs.StringVar(&f.config, "config", "", "the hub's config file, for stream names and parse settings (default: the defaults)")
		f.data.register(fs)
		f.api.register(fs, e)
	})
}

// opsClock is the clock of bulk replays; tests replace it to check --rate
// without sleeping.
var opsClock = struct {
	now   func() time.Time
	sleep func(time.Duration)
}{time.Now, time.Sleep}

// session is a connection to the hub and the ops acting for one person;
// api is set when there is no audit key here and the actions go through
// the hub's API (act).
type session struct {
	e    *env
	json bool
	nc   *nats.Conn
	ops  *ops.Ops
	api  *hubAPI
}

// act is what performs an action: the hub's API without a key here,
// else the library (signing with the key).
func (s *session) act() runbook {
	if s.api != nil {
		return s.api
	}
	return s.ops
}

// What a session will do with the audit trail.
type auditUse int

const (
	readsOnly    auditUse = iota // lists, verifies: no key needed
	appendsHere                  // appends itself: the key, or a refusal
	appendsOrAPI                 // the key, else the hub's API with a token, else a refusal
)

func (f *opsFlags) connect(e *env, client string) (*session, error) {
	return f.connectAs(e, client, appendsHere)
}

// connectAs connects for use. The runbook's auditor never appends
// without a key (audit.Signed): the CLI writes no unsigned event.
func (f *opsFlags) connectAs(e *env, client string, use auditUse) (*session, error) {
	cfg, err := app.LoadConfig(f.config)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	cfg.Hub.SetDefaults()
	dataDir := f.data.resolve(cfg.DataDir)
	keys, err := optionalKeyring(e, dataDir)
	if err != nil {
		return nil, err
	}
	var api *hubAPI
	if keys == nil && use != readsOnly {
		_, keyErr := audit.LoadKeyring(dataDir, e.getenv)
		tok, err := f.api.token(e)
		switch {
		case err != nil:
			return nil, err
		case use == appendsOrAPI && tok != "":
			if api, err = newHubAPI(f.api.url, tok); err != nil {
				return nil, err
			}
		default:
			return nil, refuseUnsigned(keyErr, use == appendsOrAPI)
		}
	}
	nc, j, err := f.clientFlags.connect(client)
	if err != nil {
		return nil, hubDownErr(err)
	}
	actor := f.actor
	if actor == "" {
		actor = nonEmptyStr(e.getenv("USER"), e.getenv("LOGNAME"), osUserName(), "unknown")
	}
	ops, err := app.OpenOps(context.Background(), j, cfg, &app.OpsOptions{
		Actor: actor, Auditor: audit.New(j, cfg.Hub.Streams.Audit, audit.WithKeyring(keys), audit.Signed()), Now: opsClock.now, Sleep: opsClock.sleep,
		Warn: func(err error) { fmt.Fprintf(e.stderr, "warning: %s\n", escape.Text(oneLine(err.Error()))) },
	})
	if errors.Is(err, app.ErrConfig) {
		nc.Close()
		return nil, usageErr("%s", oneLine(err.Error()))
	}
	if err != nil {
		nc.Close()
		return nil, failedErr("%v", err)
	}
	if api != nil && f.actor != "" {
		fmt.Fprintf(e.stderr, "note: no audit key here: the hub's API acts, and its audit trail names the token's owner, not --actor %s\n", escape.Line(f.actor))
	}
	return &session{e: e, json: f.json, nc: nc, ops: ops, api: api}, nil
}

func (s *session) close() { s.nc.Close() }

// osUserName is the login name when $USER is unset (containers, cron).
func osUserName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func nonEmptyStr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// opsErr maps an error of ops.Ops to the exit codes scripts rely on.
func opsErr(err error) error {
	var ee *exitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return err
	case errors.Is(err, ops.ErrBadID), errors.Is(err, ops.ErrBadRequest), errors.Is(err, ops.ErrReasonRequired):
		return usageErr("%s", err.Error())
	case errors.Is(err, js.ErrStreamNotFound):
		return unreachableErr(fmt.Errorf("%s (is this server running an edihub hub?)", err.Error()))
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, js.ErrJetStreamNotEnabled):
		return unreachableErr(errors.New(err.Error()))
	}
	return failedErr("%s", err.Error())
}

func (s *session) printJSON(v any) error {
	enc := json.NewEncoder(escape.JSONWriter(s.e.stdout))
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// parseArgs parses flags wherever they appear (`replay DLQ:1 --force`):
// the flag package stops at the first argument otherwise.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// filterFlags are inspect's filter flags; --filter takes the same as one
// key=value list.
type filterFlags struct {
	expr, kind, stage, cause, partner, since, class, fingerprint string
}

func (f *filterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.expr, "filter", "", "key=value,... with keys kind, stage, cause, partner, error-class, fingerprint, code, segment, since")
	fs.StringVar(&f.kind, "kind", "", "dlq, parking or poison (a|b for several)")
	fs.StringVar(&f.stage, "stage", "", "stage name, e.g. parse")
	fs.StringVar(&f.cause, "cause", "", "schema, business, partner-rejected, signature-invalid, unknown (or a poison cause)")
	fs.StringVar(&f.partner, "partner", "", "partner ID")
	fs.StringVar(&f.since, "since", "", "stored within this long, e.g. 30m, 2h, 7d")
	fs.StringVar(&f.class, "error-class", "", "error class (x-error-class), e.g. permanent, exhausted, crash")
	fs.StringVar(&f.fingerprint, "fingerprint", "", "error fingerprint (x-error-fingerprint)")
}

func (f *filterFlags) build() (ops.Filter, error) {
	flt, err := ops.ParseFilter(f.expr)
	if err != nil {
		return flt, usageErr("--filter: %v", err)
	}
	for _, kv := range [][2]string{{"kind", f.kind}, {"stage", f.stage}, {"cause", f.cause}, {"partner", f.partner},
		{"since", f.since}, {"error-class", f.class}, {"fingerprint", f.fingerprint}} {
		if kv[1] != "" {
			if err := flt.Set(kv[0], kv[1]); err != nil {
				return flt, usageErr("--%s: %v", kv[0], err)
			}
		}
	}
	return flt, nil
}

func dlqLs(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "dlq ls", "[flags]")
	var of opsFlags
	of.register(fs, e)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("unexpected argument %q", escape.Line(pos[0]))
	}
	s, err := of.connectAs(e, "edihub-dlq", readsOnly)
	if err != nil {
		return err
	}
	defer s.close()
	sum, err := s.ops.List(ctx)
	if err != nil {
		return opsErr(err)
	}
	if s.json {
		return s.printJSON(sum)
	}
	now := opsClock.now()
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "KIND\tSTAGE\tCAUSE\tPARTNER\tCOUNT\t%s\tOLDEST\n", strings.Join(ops.AgeBuckets, "\t"))
	for _, r := range sum.Rows {
		ages := make([]string, len(ops.AgeBuckets))
		for i, b := range ops.AgeBuckets {
			ages[i] = strconv.Itoa(r.Ages[b])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s ago\n", r.Kind, cell(r.Stage), cell(r.Cause), cell(r.Partner), r.Count,
			strings.Join(ages, "\t"), age(now.Sub(r.Oldest)))
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "\ndlq %d, parking %d, poison %d", sum.Totals[wire.KindDLQ], sum.Totals[wire.KindParking], sum.Totals[wire.KindPoison])
	if sum.Superseded > 0 {
		fmt.Fprintf(e.stdout, " (+%s kept as evidence, never replayed)", plural(sum.Superseded, "edited original"))
	}
	fmt.Fprintln(e.stdout)
	return nil
}

// cell makes an untrusted value safe and short for a table.
func cell(s string) string { return clip(escape.Line(nonEmptyStr(s, "-")), 40) }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return escape.Cut(s, n-1) + "…" // an escaped value keeps Ü and —
}

// age prints a duration the way people read ages: 45s, 12m, 3h, 5d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(max(d, 0)/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

func dlqInspect(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "dlq inspect", "[--kind K] [--stage S] [--cause C] [--partner P] [--since 2h] [--error-class X] [--group [--ids]]")
	var of opsFlags
	of.register(fs, e)
	var ff filterFlags
	ff.register(fs)
	group := fs.Bool("group", false, "group by stage, cause, error code and segment tag, with the fingerprints as sub-groups (one decision per group)")
	allIDs := fs.Bool("ids", false, "with --group: list every ID of every group (default: the first 10)")
	superseded := fs.Bool("superseded", false, "include originals replaced by an edit")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("unexpected argument %q (filters are flags)", escape.Line(pos[0]))
	}
	flt, err := ff.build()
	if err != nil {
		return err
	}
	flt.Superseded = *superseded
	s, err := of.connectAs(e, "edihub-dlq", readsOnly)
	if err != nil {
		return err
	}
	defer s.close()
	entries, err := s.ops.Inspect(ctx, flt)
	if err != nil {
		return opsErr(err)
	}
	now := opsClock.now()
	if *group {
		groups := ops.GroupFailures(entries)
		if s.json {
			return s.printJSON(map[string]any{"groups": groups})
		}
		printGroups(e.stdout, groups, now, *allIDs)
		return nil
	}
	if s.json {
		return s.printJSON(map[string]any{"messages": entries})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGE\tSTAGE\tCAUSE\tPARTNER\tCLASS\tSIZE\tERROR")
	for _, en := range entries {
		msg := escape.Text(en.ErrorMsg) // stored escaped once (escape.Header)
		switch {
		case en.EditReplayedAs != "":
			msg = "(its edit " + escape.Line(en.SupersededBy) + " was replayed as " + escape.Line(en.EditReplayedAs) + "; dlq show says what became of it) " + msg
		case en.Superseded():
			msg = "(superseded by " + en.SupersededBy + ") " + msg
		}
		if en.EditedFrom != "" {
			msg = "(edit of " + escape.Line(en.EditedFrom) + ") " + msg
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", en.ID, age(now.Sub(en.Time)), cell(en.Stage), cell(en.Cause),
			cell(en.Partner), cell(en.ErrorClass), en.Size, clip(msg, 100))
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "%d message(s)\n", len(entries))
	return nil
}

// printGroups writes failure groups for people: each with its count,
// where it came from, the --filter that acts on exactly it, its
// fingerprints as sub-groups and its IDs (the first 10 unless all).
func printGroups(w io.Writer, groups []ops.Group, now time.Time, all bool) {
	if len(groups) == 0 {
		fmt.Fprintln(w, "no messages")
		return
	}
	for i, g := range groups {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  %s, %s, partners %s, newest %s ago\n", escape.Line(g.Key), plural(g.Count, "message"), cells(g.Kinds),
			cells(g.Partners), age(now.Sub(g.Last)))
		fmt.Fprintf(w, "  filter  %s\n", escape.Line(g.Filter.String()))
		for _, sg := range g.Subgroups {
			fmt.Fprintf(w, "  %4d × fingerprint %s: %s\n", sg.Count, cell(sg.Fingerprint), clip(escape.Text(sg.Sample), 100))
		}
		ids, more := g.IDs, ""
		if !all && len(ids) > 10 {
			ids, more = ids[:10], fmt.Sprintf(" … and %d more (--ids lists all)", len(g.IDs)-10)
		}
		fmt.Fprintf(w, "  IDs     %s%s\n", strings.Join(ids, " "), more)
	}
}

func cells(list []string) string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = escape.Line(nonEmptyStr(v, "-"))
	}
	return clip(strings.Join(out, ","), 40)
}

// printHeaders writes headers sorted. The hub stores its header values
// escaped already (escape.Header); escape.Text shows them as they are and
// escapes what a forged header carries raw, without escaping twice.
func printHeaders(w io.Writer, h map[string][]string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(tw, "  %s:\t%s\n", escape.Text(k), escape.Text(v))
		}
	}
	tw.Flush()
}

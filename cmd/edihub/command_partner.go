package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/edihub/edihub/app"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/nats-io/nats.go"
	"go.yaml.in/yaml/v3"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

func init() {
	register(command{name: "partner", summary: "partner profiles: list, show, try a file offline, make a signing key; paused partners: list, resume", run: runPartner})
}

const partnerUsage = `ls [--config FILE] [--json]
       edihub partner show ID [--config FILE] [--json]
       edihub partner check FILE --partner ID [--config FILE] [--sign-key FILE] [--header NAME=VALUE]... [--json]
       edihub partner keygen --id KEYID --out FILE [--json]
       edihub partner paused [--config FILE] [--json]
       edihub partner resume ID --reason TEXT [--actor NAME] [--config FILE] [--json]

The profiles come from the config's partners: section and partners.dir (what
serve runs with). check decides FILE as the parse stage would for partner ID
(offline, nothing is sent) and prints the decision and the acknowledgements
it would send; it exits 1 when the interchange would be refused. keygen makes
an Ed25519 signing key file (mode 0600) for 'edihub send --sign-key' and
prints the public key for the partner's profile. paused lists the partners
the bulkhead (hub.bulkhead) paused; resume lets one run again (audited).`

func runPartner(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageErr("partner needs a subcommand: ls, show, check, keygen, paused or resume (edihub partner -h)")
	}
	switch args[0] {
	case "ls":
		return runPartnerLs(e, args[1:])
	case "show":
		return runPartnerShow(e, args[1:])
	case "check":
		return runPartnerCheck(ctx, e, args[1:])
	case "keygen":
		return runPartnerKeygen(e, args[1:])
	case "paused":
		return runPartnerPaused(ctx, e, args[1:])
	case "resume":
		return runPartnerResume(ctx, e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintf(e.stdout, "Usage: edihub partner %s\n", partnerUsage)
		return errHelp
	}
	return usageErr("unknown partner subcommand %q (ls, show, check, keygen, paused or resume)", escape.Line(args[0]))
}

// loadPartners reads the config and its profiles, as serve does.
func loadPartners(path string) (*app.Config, *partner.Registry, error) {
	cfg, err := app.LoadConfig(path)
	if err != nil {
		return cfg, nil, usageErr("%v", err)
	}
	if err := cfg.Complete(); err != nil {
		return cfg, nil, usageErr("%v", err)
	}
	r, err := partner.New(cfg.Partners, nil)
	if err != nil {
		return cfg, nil, failedErr("%s (fix the profile; serve would refuse to start with it)", oneLine(err.Error()))
	}
	return cfg, r, nil
}

type partnerRow struct {
	ID        string   `json:"id"`
	Source    string   `json:"source"`
	Senders   []string `json:"senders"`
	Messages  []string `json:"messages"`
	Test      string   `json:"test"`
	Signature bool     `json:"signature_required"`
	Ack       string   `json:"ack"`
}

func runPartnerLs(e *env, args []string) error {
	fs := newFlagSet(e, "partner ls", "[--config FILE] [--json]")
	config := fs.String("config", "", "YAML config file (see configs/edihub.yaml)")
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, r, err := loadPartners(*config)
	if err != nil {
		return err
	}
	set := r.Set()
	rows := []partnerRow{}
	for _, id := range set.IDs() {
		p, _ := set.Get(id)
		rows = append(rows, partnerRow{ID: id, Source: set.Source(id), Senders: p.Senders, Messages: p.Messages, Test: p.Test,
			Signature: p.Signature.Required, Ack: ackSummary(p.Ack)})
	}
	if *asJSON {
		return printJSONDoc(e.stdout, map[string]any{"enabled": set.Enabled(), "partners": rows})
	}
	if !set.Enabled() {
		fmt.Fprintln(e.stdout, "no partner profiles: every partner is accepted (add partners.profiles or partners.dir to the config)")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTNER\tMESSAGES\tTEST\tSIGNED\tACKNOWLEDGEMENTS\tFROM")
	for _, r := range rows {
		sig := "no"
		if r.Signature {
			sig = "required"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", escape.Line(r.ID), escape.Line(orAny(r.Messages)), r.Test, sig,
			r.Ack, escape.Line(r.Source))
	}
	return tw.Flush()
}

func orAny(l []string) string {
	if len(l) == 0 {
		return "(any)"
	}
	return strings.Join(l, ", ")
}

func ackSummary(a partner.AckConfig) string {
	var parts []string
	if a.CONTRL != partner.AckNone {
		parts = append(parts, "CONTRL "+a.CONTRL)
	}
	if a.APERAK {
		parts = append(parts, "APERAK")
	}
	if a.X12 != partner.AckNone {
		parts = append(parts, a.X12)
	}
	if a.TA1 != partner.AckNone {
		parts = append(parts, "TA1 "+a.TA1)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func runPartnerShow(e *env, args []string) error {
	fs := newFlagSet(e, "partner show", "ID [--config FILE] [--json]")
	config := fs.String("config", "", "YAML config file (see configs/edihub.yaml)")
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErr("partner show needs one partner ID")
	}
	_, r, err := loadPartners(*config)
	if err != nil {
		return err
	}
	p, ok := r.Set().Get(rest[0])
	if !ok {
		return failedErr("partner %s has no profile (edihub partner ls lists them)", escape.Line(rest[0]))
	}
	b, err := yaml.Marshal(p)
	if err != nil {
		return failedErr("%v", err)
	}
	if *asJSON { // the same field names as the YAML
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			return failedErr("%v", err)
		}
		return printJSONDoc(e.stdout, map[string]any{"source": r.Set().Source(p.ID), "profile": m})
	}
	fmt.Fprintf(e.stdout, "# from %s\n%s", escape.Line(r.Set().Source(p.ID)), escape.Lines(string(b)))
	return nil
}

// headerFlags collects --header NAME=VALUE.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ",") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

func runPartnerCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "partner check", "FILE --partner ID [--config FILE] [--sign-key FILE] [--header NAME=VALUE]... [--json]")
	config := fs.String("config", "", "YAML config file (see configs/edihub.yaml)")
	id := fs.String("partner", "", "the partner the interchange would arrive from (edi.ingest.<ID>)")
	signKey := fs.String("sign-key", "", "sign FILE with this key file first, as 'edihub send --sign-key' does")
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	var hdrs headerFlags
	fs.Var(&hdrs, "header", "a producer header NAME=VALUE (repeatable), e.g. x-signature-key=k1")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("partner check needs one FILE (and --partner ID)")
	}
	if *id == "" {
		return usageErr("--partner ID is required: the partner the interchange would arrive from")
	}
	if err := wire.ValidPartnerID(*id); err != nil {
		return usageErr("--partner %s: %v", escape.Line(*id), err)
	}
	cfg, r, err := loadPartners(*config)
	if err != nil {
		return err
	}
	data, err := readInput(e, files[0])
	if err != nil {
		return usageErr("%s: %v", escape.Line(files[0]), err)
	}
	h := nats.Header{}
	for _, kv := range hdrs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !wire.ValidHeaderName(k) {
			return usageErr("--header %s: want NAME=VALUE", escape.Line(kv))
		}
		h.Add(k, v)
	}
	if *signKey != "" {
		k, err := partner.ReadSigningKey(*signKey)
		if err != nil {
			return usageErr("--sign-key: %v", err)
		}
		k.Sign(h, *id, data)
	}
	var d partner.Decision
	if parse.LooksXML(data) {
		d = checkUBL(ctx, *id, h, data, cfg.Parse, r)
	} else {
		d = r.Try(ctx, *id, h, data, cfg.Parse.Options(*id))
	}
	if *asJSON {
		acks := []map[string]any{}
		for _, a := range d.Acks {
			acks = append(acks, map[string]any{"subject": a.Subject, "type": a.Header.Get(wire.HdrMessageType),
				"result": a.Header.Get(wire.HdrAckResult), "payload": string(a.Data)})
		}
		if err := printJSONDoc(e.stdout, map[string]any{"file": files[0], "partner": *id, "decision": d, "acks": acks}); err != nil {
			return err
		}
	} else {
		printDecision(e.stdout, files[0], *id, d)
	}
	if !d.Accepted {
		return failedErr("partner %s's interchange would be refused (%s)", escape.Line(*id), d.Cause)
	}
	return nil
}

func printDecision(w io.Writer, file, id string, d partner.Decision) {
	if d.Accepted {
		fmt.Fprintf(w, "accepted  %s from partner %s, messages: %d → edi.parsed.%s.<type>\n", escape.Line(file), escape.Line(id), d.Messages, escape.Line(id))
		if len(d.Refused) > 0 { // accept: message
			fmt.Fprintf(w, "  refused %d message(s) alone: %s → %s (one dead letter of the interchange, x-refused-messages)\n",
				len(d.Refused), escape.Line(strings.Join(d.Refused, ",")), wire.DLQSubject("parse", d.Cause))
		}
	} else {
		fmt.Fprintf(w, "REFUSED   %s from partner %s → %s\n", escape.Line(file), escape.Line(id), wire.DLQSubject("parse", d.Cause))
		fmt.Fprintf(w, "  cause   %s\n", d.Cause)
		if d.Reason != "" {
			fmt.Fprintf(w, "  reason  %s\n", d.Reason)
		}
		if d.Rule != "" {
			fmt.Fprintf(w, "  rule    %s\n", escape.Line(d.Rule))
		}
		if d.KeyID != "" {
			fmt.Fprintf(w, "  key id  %s\n", escape.Line(d.KeyID))
		}
		fmt.Fprintf(w, "  error   %s\n", escape.Line(d.Error))
	}
	if len(d.Acks) == 0 {
		fmt.Fprintln(w, "no acknowledgement (none agreed for this outcome)")
		return
	}
	for _, a := range d.Acks {
		fmt.Fprintf(w, "acknowledgement %s (%s) → %s:\n", a.Header.Get(wire.HdrMessageType), a.Header.Get(wire.HdrAckResult), a.Subject)
		fmt.Fprintln(w, "  "+strings.TrimSuffix(strings.ReplaceAll(escape.Terminal(a.Data), "'", "'\n  "), "\n  "))
	}
}

func runPartnerKeygen(e *env, args []string) error {
	fs := newFlagSet(e, "partner keygen", "--id KEYID --out FILE [--json]")
	id := fs.String("id", "", "the key id the partner's profile will know the key by (signature.keys.<KEYID>)")
	out := fs.String("out", "", "where to write the signing key (created with mode 0600; an existing file is not overwritten)")
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageErr("--out FILE is required")
	}
	k, err := partner.NewSigningKey(*id)
	if err != nil {
		return usageErr("--id: %v", err)
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return usageErr("%s exists; choose another --out (a key is never overwritten)", escape.Line(*out))
		}
		return failedErr("%v", err)
	}
	if _, err := fmt.Fprintln(f, k.String()); err != nil {
		f.Close()
		return failedErr("%v", err)
	}
	if err := f.Close(); err != nil {
		return failedErr("%v", err)
	}
	if *asJSON {
		return printJSONDoc(e.stdout, map[string]any{"key_id": k.ID, "public_key": k.PublicKey(), "file": *out})
	}
	fmt.Fprintf(e.stdout, "wrote the signing key %s to %s (keep it secret; edihub send --sign-key %s)\n", escape.Line(k.ID), escape.Line(*out), escape.Line(*out))
	fmt.Fprintf(e.stdout, "put the public key into the partner's profile:\n  signature:\n    required: true\n    keys:\n      %s: %s\n", k.ID, k.PublicKey())
	return nil
}

// printJSONDoc prints the command's one JSON document.
func printJSONDoc(w io.Writer, v any) error {
	b, err := escape.JSON(v)
	if err != nil {
		return failedErr("%v", err)
	}
	fmt.Fprintln(w, string(b))
	return nil
}

// readInput reads a file, or standard input for "-".
func readInput(e *env, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(e.stdin)
	}
	return os.ReadFile(name)
}

var _ flag.Value = (*headerFlags)(nil)

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub"
)

// partnerPauseCmd holds what partner paused and partner resume share: the
// config's streams and pause bucket, and the connection.
type partnerPauseCmd struct {
	e   *env
	cf  clientFlags
	cfg sandboxFile
}

func (c *partnerPauseCmd) flags(name, usage string, args []string, resume bool) (pos []string, reason, actor string, data dataFlag, err error) {
	fs := newFlagSet(c.e, name, usage)
	c.cf.register(fs, c.e)
	configPath := fs.String("config", "", "YAML config file (hub.bulkhead.bucket and hub.streams name the bucket and the audit stream)")
	var r, a *string
	if resume {
		r = fs.String("reason", "", "why the partner may run again (required; goes to the audit trail)")
		a = fs.String("actor", "", "who acts (default: the OS user)")
		data.register(fs)
	}
	if pos, err = parseArgs(fs, args); err != nil {
		return nil, "", "", data, err
	}
	if c.cfg, err = loadSandboxConfig(*configPath); err != nil {
		return nil, "", "", data, usageErr("%v", err)
	}
	if resume {
		reason, actor = *r, *a
	}
	return pos, reason, actor, data, nil
}

// pauses connects and binds the pause bucket the hub's config names (a
// nil store when no hub ran with the bulkhead); closeConn ends the
// connection.
func (c *partnerPauseCmd) pauses(ctx context.Context) (s *hub.PauseStore, j js.JetStream, closeConn func(), err error) {
	nc, j, err := c.cf.connect("edihub-partner")
	if err != nil {
		return nil, nil, nil, hubDownErr(err)
	}
	s, err = hub.BindPauses(ctx, j, c.cfg.Hub.Bulkhead.Bucket)
	if err != nil {
		nc.Close()
		return nil, nil, nil, unreachableErr(err)
	}
	return s, j, nc.Close, nil
}

// runPartnerPaused lists the partners the bulkhead paused.
func runPartnerPaused(ctx context.Context, e *env, args []string) error {
	c := &partnerPauseCmd{e: e}
	pos, _, _, _, err := c.flags("partner paused", "[--config FILE] [--json]", args, false)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageErr("partner paused takes no arguments")
	}
	s, _, closeConn, err := c.pauses(ctx)
	if err != nil {
		return err
	}
	defer closeConn()
	ps, err := s.List(ctx)
	if err != nil {
		return unreachableErr(err)
	}
	if c.cf.json {
		return printJSONDoc(e.stdout, map[string]any{"paused": ps})
	}
	if len(ps) == 0 {
		fmt.Fprintln(e.stdout, "no partner is paused")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTNER\tPAUSED\tFAILED\tWINDOW\tBY")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s (%s ago)\t%d of %d\t%s\t%s\n", escape.Line(p.Partner), p.At.Format("2006-01-02 15:04:05Z"),
			age(time.Since(p.At)), p.Failures, p.Messages, escape.Line(p.Window), escape.Line(p.By))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "their messages wait in INGEST; edihub partner resume ID --reason TEXT lets one run again")
	return nil
}

// runPartnerResume lifts a pause (audited): every instance runs the
// partner's waiting messages, in order.
func runPartnerResume(ctx context.Context, e *env, args []string) error {
	c := &partnerPauseCmd{e: e}
	pos, reason, actor, data, err := c.flags("partner resume", "ID --reason TEXT [--actor NAME] [--config FILE] [--json]", args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("partner resume takes one partner ID, got %d", len(pos))
	}
	if strings.TrimSpace(reason) == "" {
		return usageErr("--reason is required: say why the partner may run again (it goes to the audit trail)")
	}
	if actor == "" {
		actor = osUser()
	}
	keys, err := cliKeyring(e, data.resolve(c.cfg.DataDir))
	if err != nil {
		return err
	}
	s, j, closeConn, err := c.pauses(ctx)
	if err != nil {
		return err
	}
	defer closeConn()
	a := audit.New(j, c.cfg.Hub.Streams.Audit, audit.WithKeyring(keys), audit.Signed())
	p, err := hub.ResumePartner(ctx, s, a, pos[0], actor, reason)
	if errors.Is(err, hub.ErrNotPaused) {
		return failedErr("partner %s is not paused (edihub partner paused lists those that are)", escape.Line(pos[0]))
	}
	if err != nil {
		return unreachableErr(err)
	}
	if c.cf.json {
		return printJSONDoc(e.stdout, map[string]any{"resumed": p, "actor": actor, "reason": reason})
	}
	fmt.Fprintf(e.stdout, "partner %s resumed (paused %s ago after %d of %d failed): its waiting messages run, in order; audited as %s: %s\n",
		escape.Line(p.Partner), age(time.Since(p.At)), p.Failures, p.Messages, escape.Line(actor), escape.Line(reason))
	return nil
}

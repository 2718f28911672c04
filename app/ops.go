package app

import (
	"context"
	"fmt"
	"time"

	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub/forensics"
	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// OpsOptions say who acts through the runbook OpenOps returns; nil means
// defaults.
type OpsOptions struct {
	// Actor names the person in audit events (default "api").
	Actor string
	// Auditor appends the audit events (default: unsigned, on the
	// configured audit stream).
	Auditor *audit.Auditor
	// Grants records forced replays (default: the ledger bucket if it
	// exists and the ledger is enabled; none refuses --force).
	Grants ops.Granter
	// Now and Sleep are the clock of bulk replays (default: real time).
	Now   func() time.Time
	Sleep func(time.Duration)
	// Logger (default: none).
	Logger *zerolog.Logger
	// Agreements and Ledger are what dry runs decide with, as the parse
	// stage does (default: the configured partner profiles; no ledger).
	Agreements parse.Agreements
	Ledger     parse.Ledger
	// Warn is told of a replayed quarantined message whose forensic ticket
	// could not be noted (default: nothing).
	Warn func(error)
}

// OpenOps returns the operator runbook on j for the hub configured by cfg
// (nil: DefaultConfig), with the business rules every caller gets: a
// replayed quarantined message is noted on its forensic ticket, forced
// replays are granted in the ledger. The CLI's dlq and poison commands and
// the application's API use it.
func OpenOps(ctx context.Context, j js.JetStream, cfg *Config, o *OpsOptions) (*ops.Ops, error) {
	c := DefaultConfig()
	if cfg != nil {
		c = *cfg
	}
	c.SetDefaults()
	var opt OpsOptions
	if o != nil {
		opt = *o
	}
	oo := ops.OpsOptions{JS: j, Streams: c.Hub.Streams, Auditor: opt.Auditor, Actor: opt.Actor, Now: opt.Now, Sleep: opt.Sleep,
		EDIFACT: c.Parse, Replicas: c.NATS.Replicas, Grants: opt.Grants, Logger: zerolog.Nop(),
		Agreements: opt.Agreements, Ledger: opt.Ledger, PayloadBucket: c.Hub.ClaimCheck.Bucket}
	if oo.Agreements == nil {
		ags, err := partner.New(c.Partners, &partner.Options{Logger: zerolog.Nop()})
		if err != nil {
			return nil, fmt.Errorf("%w: partners: %v", ErrConfig, err)
		}
		oo.Agreements = ags
	}
	if oo.Actor == "" {
		oo.Actor = "api"
	}
	if oo.Auditor == nil {
		oo.Auditor = audit.New(j, c.Hub.Streams.Audit)
	}
	if opt.Logger != nil {
		oo.Logger = *opt.Logger
	}
	if oo.Grants == nil && !c.Ledger.Disabled {
		bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if led, err := ledger.BindKV(bctx, j, &ledger.KVOptions{Bucket: c.Ledger.Bucket, TTL: c.Ledger.TTL}); err == nil {
			oo.Grants = led
		}
		cancel()
	}
	warn := opt.Warn
	if warn == nil {
		warn = func(error) {}
	}
	oo.Replayed = notePoisonReplays(j, c.Sandbox, oo.Actor, warn)
	return ops.NewOps(oo)
}

// notePoisonReplays is the ops.OpsOptions.Replayed hook that notes a
// replayed quarantined message on its forensic ticket, so that poison ls
// says "replayed as INGEST:n" rather than "copy gone".
func notePoisonReplays(j js.JetStream, sc forensics.Config, actor string, warn func(error)) func(context.Context, string, ops.ReplayItem) {
	return func(ctx context.Context, kind string, it ops.ReplayItem) {
		if kind != wire.KindPoison {
			return
		}
		st, err := forensics.OpenStore(ctx, j, sc, false)
		if err == nil {
			err = st.NoteReplayed(ctx, it.ID, it.NewID, actor)
		}
		if err != nil {
			warn(fmt.Errorf("%s replayed, but its forensic ticket does not say so: %w", it.ID, err))
		}
	}
}

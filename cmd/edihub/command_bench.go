package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/edihub/edihub/app"
	"github.com/edihub/edihub/escape"
)

func init() {
	register(command{name: "bench", summary: "measure the hub against a plain JetStream consumer", run: runBench})
}

// runBench is `edihub bench`: app.Bench on an embedded server (or, with
// --replicas 3, a three-node embedded cluster) in a temp folder, its
// progress lines or its report as JSON.
func runBench(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "bench", "[--stage noop|parse] [--messages N] [--partitions P] [--rounds R] [--partners N] [--pipeline N] [--group-settle auto|always|off] [--replicas 1|3] [--mix] [--classes 1k,100k,5m] [--json]")
	var o app.BenchOptions
	fs.StringVar(&o.Stage, "stage", "noop", "noop: the hub's own cost with a no-op stage; parse: the real parse stage and ledger against a plain consume-publish-ack pipeline")
	fs.StringVar(&o.Sides, "sides", "", "--stage parse: drains per round (default plain,ledger,noledger; plain and ledger are required; add emit for the hub publishing the same outputs without parsing, serial for the ledger side at one message out per partition, nopipe and pipe for it with hub.partner_pipeline 1 and 4)")
	fs.IntVar(&o.Pipeline, "pipeline", 0, "--stage parse: hub.partner_pipeline of the ledger and pipe sides (default: the configuration's for ledger, 4 for pipe); partition_concurrency is raised to twice it (a partner takes at most half the workers)")
	fs.StringVar(&o.GroupSettle, "group-settle", "", "--stage parse: hub.group_settle (auto, always, off) of the ledger, noledger and pipe sides (default auto)")
	fs.IntVar(&o.Replicas, "replicas", 1, "--stage parse: 1 (one embedded server) or 3 (three embedded nodes in one cluster, every stream and bucket R3, the hub as serve runs on a cluster)")
	fs.StringVar(&o.Classes, "classes", "1k,100k,5m", "--stage parse: interchange sizes to run (1k: --messages of them; 100k: 1/40 as many; 5m: 1/1250, at least 16)")
	fs.IntVar(&o.Messages, "messages", 20000, "messages per run")
	fs.IntVar(&o.Partitions, "partitions", 8, "partitions")
	fs.IntVar(&o.Partners, "partners", 40, "--stage parse: partners the interchanges go to (1: one partner's backlog)")
	fs.IntVar(&o.Rounds, "rounds", 3, "alternating rounds of plain and hub (the medians are compared)")
	fs.BoolVar(&o.Mix, "mix", false, "also run tiered mode with 1% transient and 0.5% permanent failures against an all-healthy run")
	asJSON := fs.Bool("json", false, "print JSON")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the hub rounds to this file (go tool pprof)")
	fs.StringVar(&o.StallDir, "stall-dump", "", "when a run makes no progress for 2s, write a goroutine dump and the consumers' server-side state into this folder")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.Messages < 100 || o.Partitions < 1 || o.Rounds < 1 || o.Partners < 1 || o.Pipeline < 0 || o.Pipeline > 64 || o.Replicas != 1 && o.Replicas != 3 {
		return usageErr("--messages must be at least 100, --partitions, --partners and --rounds at least 1, --pipeline 1..64, --replicas 1 or 3")
	}
	o.Log, o.Getenv = e.stderr, e.getenv
	if !*asJSON {
		o.Progress = e.stdout
	}
	rep, err := app.Bench(ctx, &o)
	if rep != nil && *asJSON {
		printBenchJSON(e.stdout, rep)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, app.ErrTargetMissed): // a benchmark that missed its target says so in its exit code
		return failedErr("%v", err)
	}
	return appErr(err)
}

func printBenchJSON(w io.Writer, rep any) {
	out, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Fprintln(w, string(escape.JSONBytes(out)))
}

package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/edifact"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
)

// The parse bench (`edihub bench --stage parse`) measures the hub's real
// job: guard, parse, ledger, one JSON per message to PARSED. Each round
// fills INGEST afresh (new sequences, new control references, so neither
// the server's dedupe window nor the ledger sees a repeat) and drains it
// three ways over the same partitions and file store:
//
//	plain     durable pull consumers as the hub's were (MaxAckPending=1, pull
//	          batch 16, 5 s expiry), publishing the same number of outputs
//	          of the same JSON bytes (rendered once beforehand) with
//	          jetstream.PublishAll, then acking: no parsing, no ledger
//	ledger    hub.New with parse.Stage and a ledger.OpenKV ledger on the
//	          same server, default configuration: what serve runs
//	noledger  the same without a ledger
//	serial    (with --sides) the ledger side at the old shape: one message
//	          out per partition and one worker (hub.partition_max_in_flight
//	          and partition_concurrency 1), partners behind each other
//	nopipe    (with --sides) the ledger side with one message of a partner
//	          at a time (hub.partner_pipeline 1): lanes without pipelining
//	pipe      (with --sides) the ledger side pipelined four deep within a
//	          partner (hub.partner_pipeline 4; --pipeline N: N deep)
//
// --pipeline N also runs the ledger side N deep (partition_concurrency at
// least 2N): side by side with nopipe, what pipelining and group settle give.
//
// The interchanges go to --partners partners (default benchPartners); with
// --partners 1 every side drains one partner's backlog. --replicas 3 runs
// it all on three embedded nodes in one cluster, every stream and bucket
// R3 (bench.go's newBench).
const benchPartners = 40

// parseClass is one size of interchange.
type parseClass struct {
	Name     string `json:"name"`
	Messages int    `json:"interchanges"` // per fill
	UNH      int    `json:"messages_per_interchange"`
	Lines    int    `json:"lines_per_message"`
	Bytes    int    `json:"bytes_per_interchange"`
	JSON     int    `json:"json_bytes_per_interchange"`
}

func parseClasses(small int) map[string]parseClass {
	return map[string]parseClass{
		"1k":   {Name: "1k", Messages: small, UNH: 1, Lines: 7},
		"100k": {Name: "100k", Messages: max(16, small/40), UNH: 1, Lines: 1050},
		"5m":   {Name: "5m", Messages: max(16, small/1250), UNH: 500, Lines: 100},
	}
}

// benchInvoice is an EDIFACT interchange of ours: msgs INVOIC messages of
// lines line items each (about 100 bytes a line), control reference ref.
func benchInvoice(ref string, msgs, lines int) []byte {
	b := make([]byte, 0, 256+msgs*(400+lines*110))
	b = fmt.Appendf(b, "UNA:+.? 'UNB+UNOC:3+5412345000013:14+4012345000009:14+261130:1200+%s'", ref)
	for m := 1; m <= msgs; m++ {
		start := len(b)
		b = fmt.Appendf(b, "UNH+%d+INVOIC:D:96A:UN:EAN008'BGM+380+%s-%d+9'DTM+137:20261130:102'DTM+35:20261128:102'", m, ref, m)
		b = append(b, "RFF+ON:PO-4711-0815'NAD+BY+4012345000009::9++BUYER GMBH+HAUPTSTRASSE 1+BERLIN++10115+DE'"...)
		b = append(b, "NAD+SU+5412345000013::9++SUPPLIER NV+KERKSTRAAT 2+GENT++9000+BE'RFF+VA:BE0123456789'CUX+2:EUR:4'"...)
		for l := 1; l <= lines; l++ {
			b = fmt.Appendf(b, "LIN+%d++%013d:SRS'IMD+F++:::WIDGET TYPE %d BLUE'QTY+47:%d:PCE'MOA+203:%d.%02d'PRI+AAA:%d.29'",
				l, 4000862141404+l, l%97, l%50+1, l*13, l%100, l%40+1)
		}
		b = fmt.Appendf(b, "UNS+S'MOA+77:%d.50'MOA+79:%d.00'TAX+7+VAT+++:::19+S'MOA+124:%d.12'", lines*21, lines*17, lines*3)
		segs := 0
		for _, c := range b[start:] {
			if c == '\'' {
				segs++
			}
		}
		b = fmt.Appendf(b, "UNT+%d+%d'", segs+1, m)
	}
	return fmt.Appendf(b, "UNZ+%d+%s'", msgs, ref)
}

// parseSideRun is one side's drain of one fill.
type parseSideRun struct {
	rate     float64
	perPart  []float64     // msg/s of each partition, first to last message
	spread   time.Duration // first partition's first message to the last one's
	writes   float64
	failures int
	stageMs  float64 // mean time of the pipeline (stages only) per message
}

type parseSideReport struct {
	MsgsPerSec      []float64 `json:"msgs_per_sec"`
	PartitionMedian []float64 `json:"partition_median_msgs_per_sec"`
	PartitionMin    []float64 `json:"partition_min_msgs_per_sec"`
	CounterWrites   float64   `json:"edihub_counter_writes_total"`
	NonOK           int       `json:"non_ok_messages,omitempty"`
	StageMs         []float64 `json:"stage_ms_mean,omitempty"`
	CPUMicrosPerMsg []float64 `json:"cpu_us_per_msg"`
	// ServerMsgs is what the server received and sent per interchange
	// (client protocol messages: publishes, acks and pull requests in;
	// deliveries and publish acks out), per round: the server-side work
	// a side asks for, steady where CPU and rates are not.
	ServerMsgsIn  []float64 `json:"server_msgs_in_per_msg"`
	ServerMsgsOut []float64 `json:"server_msgs_out_per_msg"`
	// PerLedgerEntry is how many interchanges shared one ledger batch
	// entry, per round (ledger side only).
	PerLedgerEntry []float64 `json:"interchanges_per_ledger_entry,omitempty"`
	// OutputsStored is how many outputs PARSED stored during the drain,
	// per round (its sequences: a discarded one still counts, a duplicate
	// dropped by its dedupe id does not): one per message of every
	// interchange when nothing was lost or stored twice.
	OutputsStored []uint64 `json:"parsed_outputs_stored"`
	// StartSpread is the seconds from the first partition's first message
	// to the last partition's, per round.
	StartSpread      []float64 `json:"partition_start_spread_seconds"`
	perPartitionRuns [][]float64
}

type parseRatio struct {
	Median float64   `json:"median_ratio"`
	Rounds []float64 `json:"round_ratios"`
	// PartitionMedian and PartitionMin compare each partition's rate to the
	// same partition's plain rate in the same round: the median and the
	// worst over all partitions and rounds.
	PartitionMedian float64 `json:"partition_ratio_median"`
	PartitionMin    float64 `json:"partition_ratio_min"`
}

type parseClassReport struct {
	Class     parseClass                  `json:"class"`
	Sides     map[string]*parseSideReport `json:"sides"`
	Ledger    parseRatio                  `json:"ledger_vs_plain"`
	NoLedger  *parseRatio                 `json:"noledger_vs_plain,omitempty"`
	Emit      *parseRatio                 `json:"emit_vs_plain,omitempty"`
	Serial    *parseRatio                 `json:"ledger_vs_serial,omitempty"`
	NoPipe    *parseRatio                 `json:"ledger_vs_nopipe,omitempty"`
	Pipe      *parseRatio                 `json:"pipe_vs_nopipe,omitempty"`
	TargetMet bool                        `json:"target_met"`
	// StreamReplicas are the replicas the server gives each stream (KV_*:
	// a bucket) after the class's rounds.
	StreamReplicas map[string]int `json:"stream_replicas"`
	CounterWrites  float64        `json:"edihub_counter_writes_total"`
}

// ParseBenchReport is what the parse bench measured (`edihub bench --stage parse --json`).
type ParseBenchReport struct {
	Stage      string `json:"stage"`
	Partitions int    `json:"partitions"`
	Partners   int    `json:"partners"`
	// Replicas of every stream and bucket: 1 on one embedded server, 3 on
	// a three-node embedded cluster.
	Replicas int     `json:"replicas"`
	Rounds   int     `json:"rounds"`
	Target   float64 `json:"target_ratio"`
	// GC is the Go collector's setting both sides ran under.
	GC      string              `json:"gc"`
	Classes []*parseClassReport `json:"classes"`
}

// parseSides are the drains of a round; "emit" (with --sides) is the hub
// with a stage that emits the plain side's outputs without parsing: the
// hub's own cost around a stage that publishes; "serial" the ledger side
// with one message out per partition; "nopipe" the ledger side without
// pipelining within a partner, "pipe" with it four deep.
var parseSides = []string{"plain", "ledger", "noledger"}

func runParseBench(ctx context.Context, o *BenchOptions) (*ParseBenchReport, error) {
	n, parts, rounds, classList, sides := o.Messages, o.Partitions, o.Rounds, o.Classes, o.Sides
	if sides != "" {
		parseSides = strings.Split(sides, ",")
		for _, s := range parseSides {
			if !slices.Contains([]string{"plain", "ledger", "noledger", "emit", "serial", "nopipe", "pipe"}, s) {
				return nil, configErr(fmt.Errorf("--sides: %q is not one of plain, ledger, noledger, emit, serial, nopipe, pipe", s))
			}
		}
		if !slices.Contains(parseSides, "plain") || !slices.Contains(parseSides, "ledger") {
			return nil, configErr(errors.New("--sides must hold plain and ledger"))
		}
	}
	// Both sides run in this process, under the collector settings serve
	// uses by default.
	gc := RuntimeConfig{GCPercent: DefaultGCPercent}.Apply(o.Getenv)
	all := parseClasses(n)
	var classes []parseClass
	for _, name := range strings.Split(classList, ",") {
		c, ok := all[strings.TrimSpace(name)]
		if !ok {
			return nil, configErr(fmt.Errorf("--classes: %q is not one of 1k, 100k, 5m", name))
		}
		classes = append(classes, c)
	}
	say := o.say
	var profile io.Writer
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			return nil, configErr(fmt.Errorf("--cpuprofile: %w", err))
		}
		defer f.Close()
		profile = f
	}
	const target = 0.7
	rep := &ParseBenchReport{Stage: "parse", Partitions: parts, Partners: cmp.Or(o.Partners, benchPartners), Replicas: cmp.Or(o.Replicas, 1), Rounds: rounds, Target: target, GC: gc}
	say("edihub bench --stage parse: Go collector %s (serve's default; GOGC in the environment overrides it for both sides)", gc)
	for _, c := range classes {
		cr, err := runParseClass(ctx, o, c, parts, rounds, &profile, say)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		rep.Classes = append(rep.Classes, cr)
	}
	var missed []string
	for _, cr := range rep.Classes {
		if !cr.TargetMet || cr.CounterWrites != 0 {
			missed = append(missed, cr.Class.Name)
		}
	}
	if len(missed) > 0 { // a benchmark that missed its target says so in its exit code
		return rep, fmt.Errorf("%w for %s", ErrTargetMissed, strings.Join(missed, ", "))
	}
	return rep, nil
}

func runParseClass(ctx context.Context, o *BenchOptions, c parseClass, parts, rounds int, profile *io.Writer, say func(string, ...any)) (*parseClassReport, error) {
	b, err := newBench(ctx, parts, o.Replicas)
	if err != nil {
		return nil, err
	}
	defer b.close()
	b.log = zerolog.New(o.Log).Level(zerolog.ErrorLevel).With().Timestamp().Logger()
	b.stallDir = o.StallDir
	b.partners = cmp.Or(o.Partners, benchPartners)
	b.pipeline, b.groups = o.Pipeline, o.GroupSettle
	// serve opens the ledger on a connection of its own, and so does the
	// bench; EDIHUB_BENCH_LEDGER_CONN=shared puts it on the hub's (the
	// experiment that showed its batch entries wait behind the outputs).
	lj := b.js
	if o.Getenv("EDIHUB_BENCH_LEDGER_CONN") != "shared" {
		nc, j, err := ejs.Connect(b.url, "edihub-bench-ledger")
		if err != nil {
			return nil, err
		}
		defer nc.Close()
		lj = j
	}
	// the ledger as serve opens it: its index in a file (a fresh one:
	// lookups of new interchanges go to it)
	dir, err := os.MkdirTemp("", "edihub-bench-ledger")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	led, err := ledger.OpenKV(ctx, lj, &ledger.KVOptions{IndexFile: filepath.Join(dir, "ledger-index.db"),
		Replicas: b.replicas, CommitTimeout: b.config().Cluster.OutputAttempt()}) // serve's, R3: a 1 s try
	if err != nil {
		return nil, err
	}
	defer led.Close()
	if err := b.provision(ctx, b.config()); err != nil {
		return nil, err
	}
	if b.replicas > 1 { // the hub's consumers, once (bench_nats.go)
		if err := b.warmConsumers(ctx); err != nil {
			return nil, err
		}
	}
	// The plain side publishes the outputs of one rendering of the class's
	// interchange for every message: the same count and sizes of JSON the
	// hub publishes (the control reference differs by a few digits).
	sample := benchInvoice("R000000000", c.UNH, c.Lines)
	c.Bytes = len(sample)
	var outputs [][]byte
	if _, err := edifact.Walk(sample, nil, func(m *edifact.Message) error {
		j, err := edifact.MessageJSON(m)
		outputs = append(outputs, j)
		c.JSON += len(j)
		return err
	}); err != nil {
		return nil, fmt.Errorf("sample interchange: %w", err)
	}
	cr := &parseClassReport{Class: c, Sides: map[string]*parseSideReport{}}
	for _, s := range parseSides {
		cr.Sides[s] = &parseSideReport{}
	}
	for _, s := range []string{"emit", "serial", "nopipe", "pipe", "noledger"} {
		if cr.Sides[s] == nil {
			delete(cr.Sides, s)
		}
	}
	say("edihub bench --stage parse: class %s, %d interchanges of %d bytes (%d messages, %d JSON bytes each), %d partners, %d partitions, %s",
		c.Name, c.Messages, c.Bytes, c.UNH, c.JSON, b.partners, parts, b.where())
	fill := 0
	for r := 1; r <= rounds; r++ {
		for _, side := range parseSides {
			fill++
			if err := b.fillParse(ctx, c, fill); err != nil {
				return nil, fmt.Errorf("fill: %w", err)
			}
			var run parseSideRun
			recorded0, groups0 := led.CommitStats()
			parsed0, err := b.parsedLastSeq(ctx)
			if err != nil {
				return nil, err
			}
			traffic0 := b.traffic()
			cpu := processCPU()
			switch side {
			case "plain":
				run, err = b.runPlainParse(ctx, fill, c.Messages, outputs)
			case "emit":
				run, err = b.runHubParse(ctx, c.Messages, nil, nil, outputs, "")
			case "serial", "nopipe", "pipe":
				run, err = b.runHubParse(ctx, c.Messages, led, nil, nil, side)
			case "ledger", "noledger":
				var l parse.Ledger
				if side == "ledger" {
					l = led
				}
				prof := *profile
				if side == "noledger" {
					prof = nil
				}
				run, err = b.runHubParse(ctx, c.Messages, l, prof, nil, side)
				if prof != nil {
					*profile = nil // one profile per file: the first ledger round
				}
			}
			if err != nil {
				return nil, fmt.Errorf("round %d %s: %w", r, side, err)
			}
			// CPU of the whole process (the embedded server included)
			// per message: on a shared machine a steadier figure than
			// the rate, and what bounds the rate on two cores.
			cpuPerMsg := float64((processCPU() - cpu).Microseconds()) / float64(c.Messages)
			traffic := b.traffic().minus(traffic0).per(c.Messages)
			sr := cr.Sides[side]
			sr.ServerMsgsIn = append(sr.ServerMsgsIn, traffic.in)
			sr.ServerMsgsOut = append(sr.ServerMsgsOut, traffic.out)
			sr.MsgsPerSec = append(sr.MsgsPerSec, run.rate)
			sr.CPUMicrosPerMsg = append(sr.CPUMicrosPerMsg, cpuPerMsg)
			sr.PartitionMedian = append(sr.PartitionMedian, median(run.perPart))
			sr.PartitionMin = append(sr.PartitionMin, minOf(run.perPart))
			sr.perPartitionRuns = append(sr.perPartitionRuns, run.perPart)
			sr.CounterWrites += run.writes
			sr.NonOK += run.failures
			parsed, err := b.parsedLastSeq(ctx)
			if err != nil {
				return nil, err
			}
			sr.OutputsStored = append(sr.OutputsStored, parsed-parsed0)
			sr.StartSpread = append(sr.StartSpread, run.spread.Seconds())
			stageNote := ""
			if recorded, groups := led.CommitStats(); groups > groups0 {
				stageNote = fmt.Sprintf("   %.1f per ledger entry", float64(recorded-recorded0)/float64(groups-groups0))
				sr.PerLedgerEntry = append(sr.PerLedgerEntry, float64(recorded-recorded0)/float64(groups-groups0))
			}
			if side != "plain" {
				sr.StageMs = append(sr.StageMs, run.stageMs)
				stageNote = fmt.Sprintf("   stage %.3f ms of a %.3f ms cycle", run.stageMs, 1000/median(run.perPart)) + stageNote
			}
			say("  round %d  %-8s %9.1f msg/s   per partition: median %8.1f  min %8.1f   cpu %5.0f µs/msg   server in/out %.2f/%.2f msgs%s%s", r, side, run.rate,
				median(run.perPart), minOf(run.perPart), cpuPerMsg, traffic.in, traffic.out, stageNote, failNote(run.failures)+storedNote(parsed-parsed0, c.Messages*c.UNH)+spreadNote(run.spread))
		}
	}
	if cr.StreamReplicas, err = b.streamReplicas(ctx); err != nil {
		return nil, err
	}
	plain := cr.Sides["plain"]
	cr.Ledger = ratios(cr.Sides["ledger"], plain)
	noledger := cr.Sides["noledger"]
	if noledger != nil {
		r := ratios(noledger, plain)
		cr.NoLedger = &r
	}
	if e, ok := cr.Sides["emit"]; ok && len(e.MsgsPerSec) > 0 {
		r := ratios(e, plain)
		cr.Emit = &r
		say("  %s: hub emitting the same outputs without parsing / plain: median ratio %.3f (rounds %s)", c.Name, r.Median, fmtList(r.Rounds))
	}
	if sr, ok := cr.Sides["serial"]; ok && len(sr.MsgsPerSec) > 0 {
		r := ratios(cr.Sides["ledger"], sr)
		cr.Serial = &r
		say("  %s: ledger on / the same at one message out per partition (serial): median ratio %.3f (rounds %s)", c.Name, r.Median, fmtList(r.Rounds))
	}
	if np, ok := cr.Sides["nopipe"]; ok && len(np.MsgsPerSec) > 0 {
		r := ratios(cr.Sides["ledger"], np)
		cr.NoPipe = &r
		say("  %s: ledger on / the same with one message of a partner at a time (nopipe): median ratio %.3f (rounds %s)", c.Name, r.Median, fmtList(r.Rounds))
		if pp, ok := cr.Sides["pipe"]; ok && len(pp.MsgsPerSec) > 0 {
			r := ratios(pp, np)
			cr.Pipe = &r
			say("  %s: pipelined %d deep within a partner (pipe) / nopipe: median ratio %.3f (rounds %s)", c.Name, cmp.Or(b.pipeline, 4), r.Median, fmtList(r.Rounds))
		}
	}
	counted := 1 // sides whose counter writes are summed: ledger, and noledger when run
	cr.CounterWrites = cr.Sides["ledger"].CounterWrites
	if noledger != nil {
		cr.CounterWrites, counted = cr.CounterWrites+noledger.CounterWrites, 2
	}
	cr.TargetMet = cr.Ledger.Median >= 0.7 && cr.Ledger.PartitionMedian >= 0.7
	say("  %s: ledger on / plain: median ratio %.3f (rounds %s), per partition median %.3f min %.3f   target >= 0.7 %s",
		c.Name, cr.Ledger.Median, fmtList(cr.Ledger.Rounds), cr.Ledger.PartitionMedian, cr.Ledger.PartitionMin, mark(cr.TargetMet))
	if r := cr.NoLedger; r != nil {
		say("  %s: ledger off / plain: median ratio %.3f (rounds %s), per partition median %.3f min %.3f",
			c.Name, r.Median, fmtList(r.Rounds), r.PartitionMedian, r.PartitionMin)
	}
	cpuOf := func(side string) float64 {
		if sr := cr.Sides[side]; sr != nil {
			return medianOrZero(sr.CPUMicrosPerMsg)
		}
		return 0
	}
	say("  %s: CPU per message (process, server included), medians: plain %.0f µs, ledger on %.0f µs (plain/ledger %.3f), ledger off %.0f µs, serial %.0f µs, nopipe %.0f µs, pipe %.0f µs (0: side not run)",
		c.Name, cpuOf("plain"), cpuOf("ledger"), cpuOf("plain")/cpuOf("ledger"), cpuOf("noledger"), cpuOf("serial"), cpuOf("nopipe"), cpuOf("pipe"))
	say("  %s: edihub_counter_writes_total = %.0f for %d healthy interchanges   target 0 %s",
		c.Name, cr.CounterWrites, counted*rounds*c.Messages, mark(cr.CounterWrites == 0))
	return cr, nil
}

func fmtList(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strings.Join(s, " ")
}

func minOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Min(xs)
}

func ratios(side, plain *parseSideReport) parseRatio {
	r := parseRatio{Median: median(side.MsgsPerSec) / median(plain.MsgsPerSec)}
	var per []float64
	for i := range side.MsgsPerSec {
		r.Rounds = append(r.Rounds, side.MsgsPerSec[i]/plain.MsgsPerSec[i])
		for p := range side.perPartitionRuns[i] {
			if p < len(plain.perPartitionRuns[i]) && plain.perPartitionRuns[i][p] > 0 {
				per = append(per, side.perPartitionRuns[i][p]/plain.perPartitionRuns[i][p])
			}
		}
	}
	if len(per) > 0 {
		r.PartitionMedian, r.PartitionMin = median(per), slices.Min(per)
	}
	return r
}

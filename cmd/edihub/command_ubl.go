package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/ubl"
)

func init() {
	register(command{name: "ubl", summary: "check or validate UBL 2.1 invoices offline, or print their JSON view", run: runUBL})
}

const ublUsage = `check [--json] [--max-size N] FILE...
       edihub ubl validate [--json] [--profile en16931|peppol] [--strictness strict|lenient|off] [--max-size N] FILE...
       edihub ubl json [--max-size N] FILE

check: guard and parse each file (- is stdin): UBL 2.1 Invoice or CreditNote,
no DOCTYPE, within the limits; one line per file, exit 1 if any fails.
validate: check, then the UBL 2.1 schema, EN 16931 and (--profile peppol)
Peppol BIS 3 rules; one line per finding with its rule id and XPath, exit 1
if any file has a fatal finding. json: the JSON view of one file (EN 16931
business terms by BT id and the full document).`

func runUBL(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageErr("ubl needs a subcommand: %s", "check, validate or json")
	}
	switch args[0] {
	case "check":
		return runUBLCheck(ctx, e, args[1:])
	case "validate":
		return runUBLValidate(ctx, e, args[1:])
	case "json":
		return runUBLJSON(e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintf(e.stdout, "Usage: edihub ubl %s\n", ublUsage)
		return errHelp
	}
	return usageErr("unknown ubl subcommand %q (check, validate or json)", args[0])
}

// ublFlags are the options shared by the ubl subcommands.
type ublFlags struct {
	json    bool
	maxSize int64
}

func (f *ublFlags) register(fs *flag.FlagSet, withJSON bool) {
	if withJSON {
		fs.BoolVar(&f.json, "json", false, "one JSON document: {\"files\": [one object per file], \"ok\", \"failed\", \"unreadable\"}")
	}
	fs.Int64Var(&f.maxSize, "max-size", ubl.DefaultMaxSize, "largest file accepted, in bytes")
}

func (f *ublFlags) limits() *ubl.Limits { return &ubl.Limits{MaxSize: f.maxSize} }

// readUBLFile reads one file (or stdin), at most max+1 bytes: a larger one
// is refused by the guard on its size.
func readUBLFile(e *env, name string, max int64) ([]byte, error) {
	r, closeInput, err := openInput(e, name)
	if err != nil {
		return nil, err
	}
	defer closeInput()
	data, _, err := readLimited(r, max)
	if data == nil && err == nil {
		data = make([]byte, max+1) // over the limit: let the guard say so
	}
	return data, err
}

// ublFileResult and ublReport are check/validate --json (ubl.FileResult,
// ubl.Report: the results are built there, printed here).
type (
	ublFileResult = ubl.FileResult
	ublReport     = ubl.Report
)

// finishUBL prints the --json report and turns the counts into the exit.
func finishUBL(e *env, f *ublFlags, results []ublFileResult, failed, unreadable int) error {
	if f.json {
		doc := ubl.NewReport(results, failed, unreadable)
		if err := json.NewEncoder(escape.JSONWriter(e.stdout)).Encode(doc); err != nil {
			return err
		}
	}
	switch {
	case unreadable > 0:
		return usageErr("%d of %d files could not be read", unreadable, len(results))
	case failed > 0:
		return failedErr("%d of %d files failed", failed, len(results))
	}
	return nil
}

func runUBLCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "ubl check", "[--json] [--max-size N] FILE...")
	var f ublFlags
	f.register(fs, true)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErr("ubl check needs at least one FILE")
	}
	if err := f.limits().Validate(); err != nil {
		return usageErr("%v", err)
	}
	var results []ublFileResult
	failed, unreadable := 0, 0
	for _, name := range files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var res ublFileResult
		data, rerr := readUBLFile(e, name, f.maxSize)
		if rerr != nil {
			unreadable++
			res = ublFileResult{File: name, Error: rerr.Error()}
		} else if res = ubl.CheckResult(name, data, f.limits()); !res.OK {
			failed++
		}
		results = append(results, res)
		if f.json {
			continue
		}
		if res.OK {
			fmt.Fprintf(e.stdout, "ok  %s  (%s, %s)\n", escape.Line(name), res.Type, plural(res.Elements, "element"))
		} else {
			fmt.Fprintf(e.stdout, "FAIL %s: %s\n", escape.Line(name), escape.Text(singleLine(res.Error)))
		}
	}
	return finishUBL(e, &f, results, failed, unreadable)
}

package main

import (
	"context"
	"fmt"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/ubl"
)

func runUBLValidate(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "ubl validate", "[--json] [--profile en16931|peppol] [--strictness strict|lenient|off] [--max-size N] FILE...")
	var f ublFlags
	f.register(fs, true)
	profile := fs.String("profile", ubl.ProfileEN16931, "rule sets: en16931 (UBL 2.1 schema and EN 16931) or peppol (also Peppol BIS Billing 3.0)")
	strictness := fs.String("strictness", string(ubl.DefaultStrictness), "strict, lenient (code list findings are warnings) or off")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErr("ubl validate needs at least one FILE")
	}
	st, err := ubl.ParseStrictness(*strictness)
	if err != nil {
		return usageErr("%v", err)
	}
	if *profile != ubl.ProfileEN16931 && *profile != ubl.ProfilePeppol {
		return usageErr("profile %q: want en16931 or peppol", *profile)
	}
	if err := f.limits().Validate(); err != nil {
		return usageErr("%v", err)
	}
	opts := &ubl.Options{Strictness: st, Profile: *profile}
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
		} else if res = ubl.ValidateResult(name, data, f.limits(), opts); !res.OK {
			failed++
		}
		results = append(results, res)
		if f.json {
			continue
		}
		switch {
		case res.Error != "":
			fmt.Fprintf(e.stdout, "FAIL %s: %s\n", escape.Line(name), escape.Text(singleLine(res.Error)))
		case res.OK:
			fmt.Fprintf(e.stdout, "ok  %s  (%s, %s, %s)\n", escape.Line(name), res.Type, *profile, plural(len(res.Findings), "warning"))
		default:
			fmt.Fprintf(e.stdout, "FAIL %s: %s (%s)\n", escape.Line(name), escape.Text(fmt.Sprint(ubl.FailedRules(res.Findings))), res.Cause)
		}
		for _, fd := range res.Findings {
			fmt.Fprintf(e.stdout, "    %s %s at %s (line %d, column %d): %s\n", fd.Severity, fd.Rule, escape.Line(fd.XPath), fd.Line, fd.Column, escape.Text(fd.Message))
		}
	}
	return finishUBL(e, &f, results, failed, unreadable)
}

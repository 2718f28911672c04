package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/edihub/edihub/edifact/directory"
	"github.com/edihub/edihub/escape"
)

const edifactValidateUsage = "[--json] [--strictness strict|lenient|off] [--directory-dir DIR] [--max-findings N] [--lenient] [--max-size N] FILE..."

// validateFile is one file's object in `edifact validate --json`
// (directory.FileResult: built there, printed here).
type validateFile = directory.FileResult

// validateReport is `edifact validate --json`: one document for all files.
type validateReport struct {
	Strictness  directory.Strictness `json:"strictness"`
	Directories []string             `json:"directories"`
	Files       []validateFile       `json:"files"`
	OK          int                  `json:"ok"`
	Failed      int                  `json:"failed"`
	Unreadable  int                  `json:"unreadable"`
}

// runEdifactValidate checks each file like `edifact check` (guard, syntax,
// envelopes) and then validates every EDIFACT message against its UN/EDIFACT
// directory: the shipped ones plus those of --directory-dir.
func runEdifactValidate(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "edifact validate", edifactValidateUsage)
	var f edifactFlags
	f.register(fs, true)
	strictness := fs.String("strictness", string(directory.DefaultStrictness), "strict (code values are errors too), lenient (code values are warnings) or off")
	dirDir := fs.String("directory-dir", "", "folder of further directories in the XML layout (one sub-folder per directory, e.g. D11A/ with segments.xml, codes.xml, messages/)")
	maxFindings := fs.Int("max-findings", 100, "findings kept per message")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErr("edifact validate needs at least one FILE")
	}
	if err := f.options().Validate(); err != nil {
		return usageErr("%v", err)
	}
	s, err := directory.ParseStrictness(*strictness)
	if err != nil {
		return usageErr("--strictness: %v", err)
	}
	set, err := directory.Builtin()
	if err != nil {
		return fmt.Errorf("loading the shipped directories: %w", err)
	}
	if *dirDir != "" {
		if set, err = set.LoadFolder(*dirDir); err != nil {
			return usageErr("--directory-dir: %v (hint: the folder holds one sub-folder per directory, each with segments.xml and messages/)", err)
		}
	}
	v, err := directory.NewValidator(set, &directory.Options{Strictness: s, MaxFindings: *maxFindings})
	if err != nil {
		return usageErr("%v", err)
	}
	rep := validateReport{Strictness: v.Strictness(), Directories: set.Names()}
	for _, name := range files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		res := validateOne(e, name, f, v)
		switch {
		case res.Cause == "" && res.Error != "":
			rep.Unreadable++
		case res.OK:
			rep.OK++
		default:
			rep.Failed++
		}
		rep.Files = append(rep.Files, res)
		if !f.json {
			printValidateText(e, res)
		}
	}
	if f.json {
		if err := json.NewEncoder(escape.JSONWriter(e.stdout)).Encode(rep); err != nil {
			return err
		}
	}
	switch {
	case rep.Unreadable > 0:
		return usageErr("%d of %d files could not be read", rep.Unreadable, len(files))
	case rep.Failed > 0:
		return failedErr("%d of %d files failed", rep.Failed, len(files))
	}
	return nil
}

// validateOne reads, parses and validates one file (- is stdin).
func validateOne(e *env, name string, f edifactFlags, v *directory.Validator) validateFile {
	res := validateFile{File: name, Messages: []*directory.Result{}, Interchanges: []*directory.Result{}}
	r, closeInput, err := openInput(e, name)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	data, size, err := readLimited(r, f.maxSize)
	closeInput()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	return v.ValidateFile(name, data, size, f.maxSize, f.options())
}

func printValidateText(e *env, res validateFile) {
	if res.Error != "" {
		fmt.Fprintf(e.stdout, "FAIL %s: %s\n", escape.Line(res.File), escape.Text(singleLine(res.Error)))
		return
	}
	validated := 0
	for _, m := range res.Messages {
		if m.Validated {
			validated++
		}
	}
	verdict := "ok  "
	if !res.OK {
		verdict = "FAIL"
	}
	fmt.Fprintf(e.stdout, "%s %s  (%s, %d validated, %s, %s)\n", verdict, escape.Line(res.File),
		plural(len(res.Messages), "message"), validated, plural(res.Errors, "error"), plural(res.Warnings, "warning"))
	for _, ir := range res.Interchanges {
		for _, fd := range ir.Findings {
			fmt.Fprintf(e.stdout, "    %s: interchange %s: %s\n", fd.Severity, escape.Line(ir.Ref), escape.Text(fd.String()))
		}
	}
	for _, m := range res.Messages {
		for _, fd := range m.Findings {
			fmt.Fprintf(e.stdout, "    %s: message %s %s:%s:%s: %s\n", fd.Severity, escape.Line(m.Ref), escape.Line(m.Type),
				escape.Line(m.Version), escape.Line(m.Release), escape.Text(fd.String()))
		}
		if m.Truncated {
			fmt.Fprintf(e.stdout, "    (message %s: more findings not shown; raise --max-findings)\n", escape.Line(m.Ref))
		}
	}
}

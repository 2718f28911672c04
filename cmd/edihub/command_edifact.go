package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/escape"
)

func init() {
	register(command{name: "edifact", summary: "check EDIFACT/X12 files offline, or print their JSON view", run: runEdifact})
}

const edifactUsage = `check [--json] [--lenient] [--max-size N] FILE...
       edihub edifact json [--lenient] [--max-size N] FILE
       edihub edifact validate ` + edifactValidateUsage + `

check: guard, parse and envelope-check each file (- is stdin); one line per
file, exit 1 if any fails. json: print the JSON view of one file. validate:
check, then validate each EDIFACT message against its UN/EDIFACT directory
(README, "Directory validation"); exit 1 if any file has an error.`

func runEdifact(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageErr("edifact needs a subcommand: %s", "check, json or validate")
	}
	switch args[0] {
	case "check":
		return runEdifactCheck(ctx, e, args[1:])
	case "json":
		return runEdifactJSON(e, args[1:])
	case "validate":
		return runEdifactValidate(ctx, e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintf(e.stdout, "Usage: edihub edifact %s\n", edifactUsage)
		return errHelp
	}
	return usageErr("unknown edifact subcommand %q (check, json or validate)", args[0])
}

// edifactFlags are the options shared by check and json.
type edifactFlags struct {
	json    bool
	lenient bool
	maxSize int64
}

func (f *edifactFlags) register(fs *flag.FlagSet, withJSON bool) {
	if withJSON {
		fs.BoolVar(&f.json, "json", false, "one JSON document: {\"files\": [one object per file], \"ok\", \"failed\", \"unreadable\"}")
	}
	fs.BoolVar(&f.lenient, "lenient", false, "report characters outside the syntax level's repertoire as warnings")
	fs.Int64Var(&f.maxSize, "max-size", edifact.DefaultMaxSize, "largest file accepted, in bytes")
}

func (f *edifactFlags) options() *edifact.Options {
	return &edifact.Options{MaxSize: f.maxSize, Lenient: f.lenient}
}

// parseInterspersed lets flags follow the file names (check a.edi --json).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return files, nil
		}
		files = append(files, args[0])
		args = args[1:]
	}
}

// checkResult is one file's line in --json mode.
func runEdifactCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "edifact check", "[--json] [--lenient] [--max-size N] FILE...")
	var f edifactFlags
	f.register(fs, true)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErr("edifact check needs at least one FILE")
	}
	if err := f.options().Validate(); err != nil {
		return usageErr("%v", err)
	}
	failed, unreadable := 0, 0
	var results []edifact.FileResult // --json: one document for the command
	for _, name := range files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var res edifact.FileResult
		sum, err, rerr := checkFile(e, name, f.options())
		if rerr != nil {
			unreadable++
			res = edifact.FileResult{File: name, Error: rerr.Error()}
		} else if res = edifact.CheckResult(name, sum, err); !res.OK {
			failed++
		}
		if f.json {
			results = append(results, res)
			continue
		}
		if res.OK {
			fmt.Fprintf(e.stdout, "ok  %s  (%s, %s, %s)\n", escape.Line(name), plural(res.Interchanges, "interchange"), plural(res.Messages, "message"), plural(res.Segments, "segment"))
			for _, w := range res.Warnings {
				fmt.Fprintf(e.stdout, "    warning: %s\n", escape.Text(fmt.Sprint(w)))
			}
		} else {
			fmt.Fprintf(e.stdout, "FAIL %s: %s\n", escape.Line(name), escape.Text(singleLine(res.Error)))
		}
	}
	if f.json {
		doc := edifact.NewReport(results, failed, unreadable)
		if err := json.NewEncoder(escape.JSONWriter(e.stdout)).Encode(doc); err != nil {
			return err
		}
	}
	switch {
	case unreadable > 0:
		return usageErr("%d of %d files could not be read", unreadable, len(files))
	case failed > 0:
		return failedErr("%d of %d files failed", failed, len(files))
	}
	return nil
}

// checkReport is `edifact check --json` (edifact.Report: the results are
// built there, printed here).
type checkReport = edifact.Report

// checkFile checks one file without holding it: edifact.Check reads a
// regular file in chunks, so memory is the largest message whatever the
// file's size. Stdin (or a pipe) is read into memory, at most max+1 bytes.
// rerr is an error opening or reading the file, err the file's verdict.
func checkFile(e *env, name string, o *edifact.Options) (sum *edifact.Summary, err, rerr error) {
	if name != "-" {
		fh, oerr := os.Open(name)
		if oerr != nil {
			return nil, nil, oerr
		}
		defer fh.Close()
		st, serr := fh.Stat()
		if serr != nil {
			return nil, nil, fmt.Errorf("stat %s: %w", name, serr)
		}
		if st.Mode().IsRegular() {
			sum, err = edifact.Check(fh, st.Size(), o)
			return sum, err, ioError(err)
		}
		return checkStream(fh, o)
	}
	return checkStream(e.stdin, o)
}

// checkStream checks a stream that cannot be read at random (stdin).
func checkStream(r io.Reader, o *edifact.Options) (sum *edifact.Summary, err, rerr error) {
	data, size, rerr := readLimited(r, o.MaxSize)
	if rerr != nil {
		return nil, nil, rerr
	}
	sum, err = edifact.Check(bytes.NewReader(data), size, o)
	return sum, err, ioError(err)
}

// ioError returns err if it is not the input's fault (no Cause), so that it
// counts as unreadable rather than failed.
func ioError(err error) error {
	if _, ok := err.(interface{ Cause() string }); err == nil || ok {
		return nil
	}
	return err
}

// readLimited reads at most max bytes; size is the stream's true length: when
// it is over max, the rest is counted (not kept) so that the size refusal
// names the input's size rather than the limit.
func readLimited(r io.Reader, max int64) (data []byte, size int64, err error) {
	data, err = io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, 0, fmt.Errorf("reading input: %w", err)
	}
	size = int64(len(data))
	if size > max {
		rest, err := io.Copy(io.Discard, r)
		if err != nil {
			return nil, 0, fmt.Errorf("reading input: %w", err)
		}
		size += rest
		data = nil
	}
	return data, size, nil
}

// openInput opens a file, or stdin for "-".
func openInput(e *env, name string) (io.Reader, func(), error) {
	if name == "-" {
		return e.stdin, func() {}, nil
	}
	fh, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return fh, func() { fh.Close() }, nil
}

// singleLine keeps an error on one line without touching the quoted bytes
// (runs of spaces in a partner's data are evidence; oneLine collapses them).
func singleLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

func runEdifactJSON(e *env, args []string) error {
	fs := newFlagSet(e, "edifact json", "[--as-parsed] [--lenient] [--max-size N] FILE")
	var f edifactFlags
	f.register(fs, false)
	asParsed := fs.Bool("as-parsed", false, "a JSON array of the messages, each exactly the payload the hub publishes on edi.parsed.<partner>.<type>")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("edifact json needs exactly one FILE")
	}
	if err := f.options().Validate(); err != nil {
		return usageErr("%v", err)
	}
	r, closeInput, err := openInput(e, files[0])
	if err != nil {
		return usageErr("%v", err)
	}
	data, size, err := readLimited(r, f.maxSize)
	closeInput()
	if err != nil {
		return usageErr("%v", err)
	}
	if size > f.maxSize { // refused on its size, which is not read
		_, err := edifact.GuardReaderAt(bytes.NewReader(nil), size, f.options())
		return failedErr("%s: %v", files[0], err)
	}
	if *asParsed {
		return printAsParsed(e, files[0], data, f.options())
	}
	doc, err := edifact.Parse(data, f.options())
	if err != nil {
		return failedErr("%s: %v", files[0], err)
	}
	raw, err := doc.MarshalJSON()
	if err != nil {
		return failedErr("%s: %v", files[0], err)
	}
	// json.Indent keeps partner text as is ("&", not \u0026).
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return failedErr("%s: %v", files[0], err)
	}
	out.WriteByte('\n')
	_, err = e.stdout.Write(escape.JSONBytes(out.Bytes()))
	return err
}

// printAsParsed prints the messages as the parse stage renders them: one
// JSON document (an array), each element the bytes of one edi.parsed
// payload. As in the hub, nothing is printed unless the whole input passes.
func printAsParsed(e *env, name string, data []byte, opts *edifact.Options) error {
	var msgs [][]byte
	if _, err := edifact.Walk(data, opts, func(m *edifact.Message) error {
		b, err := edifact.MessageJSON(m)
		msgs = append(msgs, b)
		return err
	}); err != nil {
		return failedErr("%s: %v", name, err)
	}
	if len(msgs) == 0 {
		return failedErr("%s: the interchange holds no message", name)
	}
	out := append([]byte("[\n"), bytes.Join(msgs, []byte(",\n"))...)
	out = append(out, "\n]\n"...)
	_, err := e.stdout.Write(escape.JSONBytes(out))
	return err
}

// plural counts n things: 1 interchange, 2 interchanges.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

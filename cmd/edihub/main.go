// One file per subcommand (command_<name>.go), each registering itself in init.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/edihub/edihub/escape"
)

// env is what a subcommand may touch of the outside world, so tests can run
// commands in-process with their own streams.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// commands is filled by the init functions of the command_<x>.go files.
var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// Exit codes shared by every subcommand (README, "Exit codes").
const (
	exitOK     = 0
	exitFailed = 1 // what the command checked failed
	exitUsage  = 2 // bad usage, or the hub cannot be reached
)

// exitError carries an exit code with a one-line reason.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

func failedErr(format string, a ...any) error {
	return &exitError{code: exitFailed, err: fmt.Errorf(format, a...)}
}

func unreachableErr(err error) error {
	return &exitError{code: exitUsage, err: err}
}

// hubDownErr is the one message for a hub that cannot be reached.
func hubDownErr(err error) error {
	var ee *exitError
	if errors.As(err, &ee) { // a refusal with its own words (checkServerURL)
		return err
	}
	return unreachableErr(fmt.Errorf("%v (is the hub running? start it with 'edihub serve')", err))
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and maps its error to an exit code.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(e.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "edihub: unknown command %q (try 'edihub help')\n", args[0])
		return exitUsage
	}
	out := &countingWriter{w: e.stdout}
	ce := *e
	ce.stdout = out
	err := c.run(ctx, &ce, args[1:])
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	code, msg := exitFailed, err.Error()
	var ee *exitError
	if errors.As(err, &ee) {
		code, msg = ee.code, ""
		if ee.err != nil {
			msg = ee.err.Error()
		}
	}
	if msg != "" {
		fmt.Fprintf(e.stderr, "edihub %s: %s\n", c.name, escape.Text(msg))
	}
	// Under --json a script reads stdout: a command that failed before it
	// printed its document prints one that says why, with the same code.
	if out.n == 0 && wantsJSON(args[1:]) {
		b, _ := escape.JSON(map[string]any{"error": cmp.Or(msg, "failed"), "exit_code": code})
		fmt.Fprintln(e.stdout, string(b))
	}
	return code
}

// countingWriter tells whether a command printed anything.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// wantsJSON reports whether the command line asks for --json.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "-json" || a == "--json=true" || a == "-json=true" {
			return true
		}
	}
	return false
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "edihub: an EDI message hub on NATS JetStream")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: edihub <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'edihub <command> -h' for the flags of one command.")
}

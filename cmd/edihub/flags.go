package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-isatty"
)

// errHelp is returned when -h was asked for: usage was printed, exit 0.
var errHelp = errors.New("help requested")

// newFlagSet returns a FlagSet that reports errors instead of exiting.
func newFlagSet(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("edihub "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: edihub %s %s\n\nFlags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return &exitError{code: exitUsage, err: errors.New("")}
	}
	return nil
}

// defaultServerURL is --server's default: $NATS_URL or the local hub.
func defaultServerURL(e *env) string {
	if u := e.getenv("NATS_URL"); u != "" {
		return u
	}
	return "nats://127.0.0.1:4222"
}

// clientFlags are the flags of every command that talks to a running hub.
// Credentials are flags or files (credentials.go), never in the URL.
type clientFlags struct {
	server string
	json   bool
	auth   authFlags
	getenv func(string) string
}

func (c *clientFlags) register(fs *flag.FlagSet, e *env) {
	fs.StringVar(&c.server, "server", defaultServerURL(e), "NATS URL of the hub (or $NATS_URL); credentials: --creds, --nkey or --user")
	fs.BoolVar(&c.json, "json", false, "print JSON for scripts")
	c.auth.register(fs, e)
	c.getenv = e.getenv
}

// isTerminal reports whether w is a character device, for progress lines.
func isTerminal(w io.Writer) bool {
	type fder interface{ Fd() uintptr }
	f, ok := w.(fder)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd())
}

// oneLine folds an error or text onto one line for stderr.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// isTerminalReader reports whether r is a terminal, for editors: an
// editor needs one to talk to.
func isTerminalReader(r io.Reader) bool {
	type fder interface{ Fd() uintptr }
	f, ok := r.(fder)
	return ok && isatty.IsTerminal(f.Fd())
}

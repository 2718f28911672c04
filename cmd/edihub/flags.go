package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"
)

// errHelp is returned when -h was asked for: usage was printed, exit 0.
var errHelp = errors.New("help requested")

// newFlagSet returns a FlagSet that reports errors instead of exiting.
func newFlagSet(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("edihub "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: edihub %s %s\n", name, usage)
		var own, conn []*flag.Flag
		marked := sharedOf(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if marked[f.Name] {
				conn = append(conn, f)
			} else {
				own = append(own, f)
			}
		})
		if len(own) > 0 {
			fmt.Fprintf(out, "\nFlags:\n")
			printFlags(out, own)
		}
		if len(conn) > 0 {
			fmt.Fprintf(out, "\nConnection flags (the hub's NATS URL and credentials, its config and data folder):\n")
			printFlags(out, conn)
		}
	}
	return fs
}

// sharedFlags names, per flag set, the flags the shared helpers register
// (clientFlags, authFlags, opsFlags, dataFlag): help lists a command's own
// flags first and these after them, instead of burying the command's
// flags in the alphabet of ten connection flags.
var sharedFlags = struct {
	sync.Mutex
	m map[*flag.FlagSet]map[string]bool
}{m: map[*flag.FlagSet]map[string]bool{}}

// shared runs register and marks the flags it added to fs as shared.
func shared(fs *flag.FlagSet, register func()) {
	before := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
	register()
	sharedFlags.Lock()
	defer sharedFlags.Unlock()
	m := sharedFlags.m[fs]
	if m == nil {
		m = map[string]bool{}
		sharedFlags.m[fs] = m
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !before[f.Name] {
			m[f.Name] = true
		}
	})
}

func sharedOf(fs *flag.FlagSet) map[string]bool {
	sharedFlags.Lock()
	defer sharedFlags.Unlock()
	return sharedFlags.m[fs]
}

// printFlags is PrintDefaults for some of a set's flags.
func printFlags(out io.Writer, flags []*flag.Flag) {
	tmp := flag.NewFlagSet("", flag.ContinueOnError)
	tmp.SetOutput(out)
	for _, f := range flags {
		tmp.Var(f.Value, f.Name, f.Usage)
		tmp.Lookup(f.Name).DefValue = f.DefValue
	}
	tmp.PrintDefaults()
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
	fs.BoolVar(&c.json, "json", false, "print JSON for scripts")
	shared(fs, func() {
		fs.StringVar(&c.server, "server", defaultServerURL(e), "NATS URL of the hub, nats://host:port (or $NATS_URL); credentials: --creds, --nkey or --user")
		c.auth.register(fs, e)
	})
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

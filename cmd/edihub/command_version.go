package main

import (
	"cmp"
	"context"
	"fmt"
	"runtime/debug"

	"github.com/edihub/edihub/escape"
)

func init() {
	register(command{name: "version", summary: "the build: edihub's version, Go and the modules it was built with", run: runVersion})
}

// buildInfo is `edihub version --json`.
type buildInfo struct {
	Version  string            `json:"version"`
	Go       string            `json:"go"`
	Revision string            `json:"revision,omitempty"`
	Modified bool              `json:"modified,omitempty"`
	Modules  map[string]string `json:"modules"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(unknown)", Modules: map[string]string{}}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Version, b.Go = bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil {
			v += " => " + d.Replace.Path + " " + d.Replace.Version
		}
		b.Modules[d.Path] = v
	}
	return b
}

func runVersion(_ context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "version", "[--json]")
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b := readBuildInfo()
	if *asJSON {
		out, err := escape.JSON(b)
		if err != nil {
			return failedErr("%v", err)
		}
		fmt.Fprintln(e.stdout, string(out))
		return nil
	}
	rev := b.Revision
	if b.Modified {
		rev += " (modified)"
	}
	fmt.Fprintf(e.stdout, "edihub %s, %s, revision %s\n", b.Version, b.Go, cmp.Or(rev, "-"))
	for _, m := range []string{"github.com/nats-io/nats-server/v2", "github.com/nats-io/nats.go", "go.etcd.io/bbolt",
		"github.com/twmb/franz-go", "github.com/prometheus/client_golang", "github.com/rs/zerolog"} {
		if v, ok := b.Modules[m]; ok {
			fmt.Fprintf(e.stdout, "  %-36s %s\n", m, v)
		}
	}
	return nil
}

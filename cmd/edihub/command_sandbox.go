package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/edihub/edihub/app"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.yaml.in/yaml/v3"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/forensics"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/sandbox"
)

func init() {
	register(command{name: "sandbox", summary: "run the forensic analysis worker on POISON (`sandbox exec` is its child)", run: runSandbox})
}

// sandboxSection is the `sandbox:` key of the config file.
type sandboxSection = forensics.Config

// sandboxFile is the part of the config file the worker and `poison` read.
// It is decoded leniently: the other sections belong to serve, which
// checks them strictly.
type sandboxFile struct {
	DataDir string         `yaml:"data_dir"` // for the audit key
	Hub     hub.Config     `yaml:"hub"`
	Parse   parse.Config   `yaml:"parse"`
	Sandbox sandboxSection `yaml:"sandbox"`
	NATS    struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"nats"`
}

// loadSandboxConfig reads the hub and sandbox sections of path (defaults
// when path is empty) and aligns the stream names with the hub's.
func loadSandboxConfig(path string) (sandboxFile, error) {
	var c sandboxFile
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("read config: %w", err)
		}
		old, b, err := app.TakeHubEDIFACT(b)
		if err != nil {
			return c, fmt.Errorf("config %s: %w", path, err)
		}
		if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&c); err != nil && !errors.Is(err, io.EOF) {
			return c, fmt.Errorf("config %s: %w", path, err)
		}
		if old != nil && reflect.DeepEqual(c.Parse, parse.Config{}) { // the deprecated place
			if err := yaml.Unmarshal(old, &c.Parse); err != nil {
				return c, fmt.Errorf("config %s: hub.edifact: %w", path, err)
			}
		}
	}
	c.Hub.SetDefaults()
	c.Sandbox.UseStreams(c.Hub.Streams)
	c.Sandbox.UseClaimCheck(c.Hub.ClaimCheck.Bucket, c.Hub.ClaimCheck.UploadStream)
	c.Sandbox.SetDefaults()
	c.Sandbox.Replicas = c.NATS.Replicas
	if err := c.Sandbox.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

func runSandbox(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "exec" {
		return runSandboxExec(e, args[1:])
	}
	fs := newFlagSet(e, "sandbox", "[--server URL] [--config FILE]   |   sandbox exec --stage S (the child; started by the worker)")
	var cf clientFlags
	cf.register(fs, e)
	configPath := fs.String("config", "", "YAML config file; reads the hub: and sandbox: sections")
	logLevel := fs.String("log-level", "info", "trace, debug, info, warn, error")
	metricsAddr := fs.String("metrics", "", "serve /metrics on this address (off by default)")
	var data dataFlag
	data.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := loadSandboxConfig(*configPath)
	if err != nil {
		return usageErr("%v", err)
	}
	log, err := newLogger(e.stderr, *logLevel, "auto")
	if err != nil {
		return usageErr("%v", err)
	}
	keys, err := workerKeyring(e, data.resolve(cfg.DataDir))
	if err != nil {
		return err
	}
	nc, _, err := cf.connect("edihub-sandbox")
	if err != nil {
		return unreachableErr(err)
	}
	defer nc.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if *metricsAddr != "" {
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			return failedErr("metrics listen %s: %v", *metricsAddr, err)
		}
		srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	f, err := forensics.New(forensics.Options{Conn: nc, Config: cfg.Sandbox, EDIFACT: cfg.Parse,
		Logger: log, Registry: reg, Actor: app.ActorName("edihub-sandbox"), Keyring: keys})
	if err != nil {
		return usageErr("%v", err)
	}
	if err := f.Run(ctx); err != nil {
		return failedErr("%v", err)
	}
	return nil
}

// runSandboxExec is the child: the payload (after a one-line JSON preamble
// with the stage, headers and parse options) is on stdin, the limits are in
// the environment, the report goes out on fd 3. It never talks to NATS.
func runSandboxExec(e *env, args []string) error {
	fs := newFlagSet(e, "sandbox exec", "--stage S (started by the forensics worker; not for people)")
	stage := fs.String("stage", "", "the stage that failed (informational: the preamble on stdin decides)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_ = stage // visible in ps and /proc/<pid>/cmdline while the child runs
	if code := sandbox.ChildMain(forensics.Analyzer(parse.Config{})); code != 0 {
		return &exitError{code: code, err: errors.New("")}
	}
	return nil
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/edihub/edihub/audit"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.yaml.in/yaml/v3"

	"github.com/edihub/edihub/bridge"
)

func init() {
	register(command{name: "bridge", summary: "move records between Kafka and the hub (both directions)", run: runBridge})
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runBridge(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "bridge", "--brokers HOST:PORT[,…] (--in topic=T … | --out filter=F,topic=T … | --config FILE)")
	server := fs.String("server", defaultServerURL(e), "NATS URL of the hub (or $NATS_URL)")
	var auth authFlags // --creds, --nkey, --user, --password-file, --tls-*
	auth.register(fs, e)
	brokers := fs.String("brokers", "", "Kafka seed brokers, comma separated (overrides the config file)")
	configPath := fs.String("config", "", "hub YAML config; its bridge: section is read")
	metricsAddr := fs.String("metrics", "", "serve Prometheus metrics on HOST:PORT/metrics (off when empty)")
	logLevel := fs.String("log-level", "info", "trace, debug, info, warn or error")
	dataDir := fs.String("data", "", "serve's data folder: its audit key (or $EDIHUB_AUDIT_KEY) signs and checks the x-kafka-* headers; without one the outbound routes take no key or origin from them")
	var ins, outs multiFlag
	fs.Var(&ins, "in", "inbound route `topic=T[,subject=edi.ingest.{{partner}}][,partner=key|header:NAME][,group=G][,name=N][,dlt_topic={{topic}}.DLT][,dlt_headers=spring|connect|none]` (repeatable)")
	fs.Var(&outs, "out", "outbound route `filter=F[,topic=T|{{subject}}][,stream=S][,durable=D][,dlt_headers=spring|connect|none][,dlt_topic=spring][,key_token=N][,name=N]` (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	cfg, err := bridgeConfig(*configPath, *brokers, ins, outs)
	if err != nil {
		return usageErr("%v", err)
	}
	if !cfg.Enabled() {
		return usageErr("no routes: give --in, --out or a --config with a bridge: section")
	}
	// SASL secrets may come from the environment instead of the file.
	cfg.ApplyEnv(e.getenv)
	if *dataDir != "" || e.getenv(audit.KeyEnv) != "" {
		keys, err := audit.LoadKeyring(*dataDir, e.getenv)
		if err != nil {
			return usageErr("audit key: %v", err)
		}
		cfg.Keys = keys
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%s", oneLine(err.Error()))
	}
	log, err := newLogger(e.stderr, *logLevel, "auto")
	if err != nil {
		return usageErr("%v", err)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if *metricsAddr != "" {
		stop, err := serveMetrics(*metricsAddr, reg, e.stderr)
		if err != nil {
			return usageErr("--metrics %s: %v", *metricsAddr, err)
		}
		defer stop()
	}

	nc, j, err := connectWith(*server, "edihub-bridge", auth.clientAuth(e.getenv))
	if err != nil {
		return hubDownErr(err)
	}
	defer nc.Close()
	b, err := bridge.New(cfg, nc, j, log, reg)
	if err != nil {
		return usageErr("%v", err)
	}
	// Run returns when ctx (SIGINT/SIGTERM) is done, after finishing and
	// committing the batches in flight.
	if err := b.Run(ctx); err != nil {
		return failedErr("%v", err)
	}
	return nil
}

// bridgeConfig reads the bridge: section of path (if any), then applies
// --brokers and appends the --in / --out routes.
func bridgeConfig(path, brokers string, ins, outs []string) (*bridge.Config, error) {
	cfg := &bridge.Config{}
	if path != "" {
		c, err := readBridgeSection(path)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	if brokers != "" {
		cfg.Brokers = nil
		for _, b := range strings.Split(brokers, ",") {
			if b = strings.TrimSpace(b); b != "" {
				cfg.Brokers = append(cfg.Brokers, b)
			}
		}
	}
	for _, s := range ins {
		r, err := bridge.ParseInFlag(s)
		if err != nil {
			return nil, err
		}
		cfg.Inbound = append(cfg.Inbound, r)
	}
	for _, s := range outs {
		r, err := bridge.ParseOutFlag(s)
		if err != nil {
			return nil, err
		}
		cfg.Outbound = append(cfg.Outbound, r)
	}
	return cfg, nil
}

// readBridgeSection decodes only the bridge: section of the hub's config.
// The other sections belong to serve and are not checked here; unknown
// keys inside bridge: are errors, so a misspelt setting is not ignored.
// The file is decoded as a whole, so a line number in an error is the
// line of the file.
func readBridgeSection(path string) (*bridge.Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var doc struct {
		Bridge *bridge.Config       `yaml:"bridge"`
		Rest   map[string]yaml.Node `yaml:",inline"` // serve's sections
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if doc.Bridge == nil {
		return &bridge.Config{}, nil
	}
	return doc.Bridge, nil
}

// serveMetrics serves reg on addr/metrics until stop is called.
func serveMetrics(addr string, reg *prometheus.Registry, errw io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(errw, "edihub bridge: metrics server: %v\n", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

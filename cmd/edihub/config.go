package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/edihub/edihub/bridge"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/api"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/partner"
)

// fileConfig is the YAML file `serve --config` reads; configs/edihub.yaml
// documents every field with its default. Flags override the file.
type fileConfig struct {
	DataDir string `yaml:"data_dir"`
	// ShutdownTimeout bounds serve's stop after SIGTERM whatever the
	// store does (serve_shutdown.go).
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	NATS            natsConfig    `yaml:"nats"`
	HTTP            httpConfig    `yaml:"http"`
	Log             logConfig     `yaml:"log"`
	Hub             hub.Config    `yaml:"hub"`
	// Bridge routes Kafka topics in and out; serve runs it when any route
	// is configured.
	Bridge bridge.Config `yaml:"bridge"`
	// Sandbox is the forensic worker serve starts as a child process.
	Sandbox sandboxSection `yaml:"sandbox"`
	// Ledger remembers processed interchanges (idempotent replay).
	Ledger ledgerConfig `yaml:"ledger"`
	// API is the JSON API on the HTTP port (no tokens, no API).
	API api.Config `yaml:"api"`
	// Partners are the partner profiles (partners.go).
	Partners partner.Config `yaml:"partners"`
	// Counter selects the attempt store.
	Counter counterConfig `yaml:"counter"`
	// Runtime tunes the Go runtime (runtime.go).
	Runtime runtimeConfig `yaml:"runtime"`
	// Cluster is how this instance shares the work with others.
	Cluster clusterConfig `yaml:"cluster"`

	path string // the file this came from, for the sandbox child
}

type ledgerConfig struct {
	// TTL is how long a processed interchange is remembered.
	TTL time.Duration `yaml:"ttl"`
	// Bucket is the JetStream KV bucket; hubs that share it share the ledger.
	Bucket string `yaml:"bucket"`
	// Replicas of the bucket (default nats.replicas).
	Replicas int `yaml:"replicas"`
	// Disabled turns duplicate-interchange detection off.
	Disabled bool `yaml:"disabled"`
}

type natsConfig struct {
	// Listen is where the embedded server accepts NATS clients.
	Listen string `yaml:"listen"`
	// URL, when set, uses an external NATS server or cluster instead of
	// the embedded one.
	URL string `yaml:"url"`
	// MaxPayload of the embedded server, in bytes.
	MaxPayload int32 `yaml:"max_payload"`
	// Serve's own credentials (overridden by --creds, --nkey, --user,
	// --password-file, --tls-*): a credentials file, an nkey seed file, or
	// a user whose password is in the environment variable PasswordEnv or
	// in PasswordFile. Never in URL: it would be logged and shown in ps.
	Creds        string  `yaml:"creds"`
	NKey         string  `yaml:"nkey"`
	User         string  `yaml:"user"`
	PasswordEnv  string  `yaml:"password_env"`
	PasswordFile string  `yaml:"password_file"`
	TLS          natsTLS `yaml:"tls"`
	// Auth turns authentication of the embedded server on: users with the
	// permissions of their role. serve connects as the (first) hub user.
	Auth natsAuth `yaml:"auth"`
	// Replicas of every stream and bucket the hub provisions: 1 on one
	// server, 3 on a three-node cluster (refused on a single server).
	Replicas int `yaml:"replicas"`
	// ServerName of the embedded server; every node of a cluster needs its
	// own.
	ServerName string `yaml:"server_name"`
	// Cluster makes the embedded server a node of a NATS cluster.
	Cluster ejs.ClusterOptions `yaml:"cluster"`
}

type httpConfig struct {
	Listen string `yaml:"listen"`
}

type logConfig struct {
	Level  string `yaml:"level"`  // trace, debug, info, warn, error
	Format string `yaml:"format"` // auto (pretty on a terminal), json, pretty
}

func defaultFileConfig() fileConfig {
	c := fileConfig{DataDir: "data", ShutdownTimeout: 30 * time.Second}
	c.NATS.Listen = "127.0.0.1:4222"
	c.NATS.MaxPayload = 32 << 20
	c.NATS.PasswordEnv = envNATSPassword
	c.HTTP.Listen = "127.0.0.1:8080"
	c.Log.Level = "info"
	c.Log.Format = "auto"
	c.Ledger.TTL = 30 * 24 * time.Hour
	c.Ledger.Bucket = "edihub-ledger"
	return c
}

// loadConfig reads path over the defaults. Unknown keys are errors: a
// misspelt setting must not be silently ignored.
func loadConfig(path string) (fileConfig, error) {
	c := defaultFileConfig()
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("read config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	c.path = path
	return c, nil
}

// complete fills in every default and checks every section, as serve runs.
func (c *fileConfig) complete() error {
	if err := c.NATS.validateAuth(); err != nil {
		return err
	}
	if err := c.completeCluster(); err != nil {
		return err
	}
	c.Hub.SetDefaults()
	if err := c.Hub.Validate(); err != nil {
		return err
	}
	if c.Bridge.Enabled() {
		if err := c.Bridge.Validate(); err != nil {
			return fmt.Errorf("bridge: %s", oneLine(err.Error()))
		}
	}
	c.Sandbox.UseStreams(c.Hub.Streams)
	c.Sandbox.SetDefaults()
	if err := c.Sandbox.Validate(); err != nil {
		return err
	}
	c.API.SetDefaults()
	if err := c.API.Validate(); err != nil {
		return err
	}
	if err := c.completePartners(); err != nil {
		return err
	}
	c.Runtime.setDefaults()
	if err := c.Runtime.validate(); err != nil {
		return err
	}
	if c.ShutdownTimeout < time.Second {
		return fmt.Errorf("shutdown_timeout %v: must be at least 1s", c.ShutdownTimeout)
	}
	if c.Ledger.TTL < time.Minute && !c.Ledger.Disabled {
		return fmt.Errorf("ledger.ttl %v: must be at least a minute", c.Ledger.TTL)
	}
	// The ledger's entries name the INGEST message an interchange came in
	// as; INGEST must keep it as long as the ledger remembers it.
	if ia := c.Hub.Retention.Ingest.MaxAge; ia > 0 && !c.Ledger.Disabled && ia < c.Ledger.TTL {
		return fmt.Errorf("hub.retention.ingest.max_age %v is shorter than ledger.ttl %v: the ledger would name INGEST messages that are gone; raise hub.retention.ingest.max_age to %v or more, or lower ledger.ttl", ia, c.Ledger.TTL, c.Ledger.TTL)
	}
	return nil
}

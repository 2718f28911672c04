package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/edihub/edihub/bridge"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/api"
	"github.com/edihub/edihub/hub/forensics"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
)

// Config is the application's configuration: the YAML file `serve
// --config` reads (configs/edihub.yaml documents every field with its
// default). New fills in its defaults and refuses what cannot work, so an
// embedder gets the refusals the CLI gives.
type Config struct {
	DataDir string `yaml:"data_dir"`
	// ShutdownTimeout bounds the stop after SIGTERM whatever the store
	// does (shutdown.go).
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	NATS            NATSConfig    `yaml:"nats"`
	HTTP            HTTPConfig    `yaml:"http"`
	Log             LogConfig     `yaml:"log"`
	Hub             hub.Config    `yaml:"hub"`
	// Parse tunes the built-in parse stage (hub.edifact before: still
	// read, with a deprecation line).
	Parse parse.Config `yaml:"parse"`
	// Bridge routes Kafka topics in and out; serve runs it when any route
	// is configured.
	Bridge bridge.Config `yaml:"bridge"`
	// Sandbox is the forensic worker serve starts as a child process.
	Sandbox forensics.Config `yaml:"sandbox"`
	// Ledger remembers processed interchanges (idempotent replay).
	Ledger LedgerConfig `yaml:"ledger"`
	// API is the JSON API on the HTTP port (no tokens, no API).
	API api.Config `yaml:"api"`
	// Partners are the partner profiles.
	Partners partner.Config `yaml:"partners"`
	// Counter selects the attempt store.
	Counter CounterConfig `yaml:"counter"`
	// Runtime tunes the Go runtime (RuntimeConfig.Apply; New does not).
	Runtime RuntimeConfig `yaml:"runtime"`
	// Cluster is how this instance shares the work with others.
	Cluster ClusterConfig `yaml:"cluster"`

	// Path is the file this came from (LoadConfig), handed to the
	// sandbox worker.
	Path string `yaml:"-"`
	// deprecated are the settings read from an old place, one line each
	// (New logs them).
	deprecated []string
}

// LedgerConfig is the ledger section.
type LedgerConfig struct {
	// TTL is how long a processed interchange is remembered.
	TTL time.Duration `yaml:"ttl"`
	// Bucket is the JetStream KV bucket; hubs that share it share the ledger.
	Bucket string `yaml:"bucket"`
	// Replicas of the bucket (default nats.replicas).
	Replicas int `yaml:"replicas"`
	// Disabled turns duplicate-interchange detection off.
	Disabled bool `yaml:"disabled"`
}

// NATSConfig is the nats section.
type NATSConfig struct {
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
	TLS          NATSTLS `yaml:"tls"`
	// Auth turns authentication of the embedded server on: users with the
	// permissions of their role. serve connects as the (first) hub user.
	Auth NATSAuth `yaml:"auth"`
	// Replicas of every stream and bucket the hub provisions: 1 on one
	// server, 3 on a three-node cluster (refused on a single server).
	Replicas int `yaml:"replicas"`
	// ServerName of the embedded server; every node of a cluster needs its
	// own.
	ServerName string `yaml:"server_name"`
	// Cluster makes the embedded server a node of a NATS cluster.
	Cluster ejs.ClusterOptions `yaml:"cluster"`
}

// HTTPConfig is the http section: /metrics, /healthz, /readyz, the API.
type HTTPConfig struct {
	Listen string `yaml:"listen"`
}

// LogConfig is the log section (the CLI builds the logger from it).
type LogConfig struct {
	Level  string `yaml:"level"`  // trace, debug, info, warn, error
	Format string `yaml:"format"` // auto (pretty on a terminal), json, pretty
}

// DefaultConfig is the configuration with no file: what New uses for a
// nil *Config.
func DefaultConfig() Config {
	c := Config{DataDir: "data", ShutdownTimeout: 30 * time.Second}
	c.NATS.Listen = "127.0.0.1:4222"
	c.NATS.MaxPayload = 32 << 20
	c.NATS.PasswordEnv = EnvNATSPassword
	c.HTTP.Listen = "127.0.0.1:8080"
	c.Log.Level = "info"
	c.Log.Format = "auto"
	c.Ledger.TTL = 30 * 24 * time.Hour
	c.Ledger.Bucket = "edihub-ledger"
	return c
}

// LoadConfig reads path over the defaults ("": the defaults). Unknown
// keys are errors: a misspelt setting must not be silently ignored.
func LoadConfig(path string) (*Config, error) {
	c := DefaultConfig()
	if path == "" {
		return &c, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	old, b, err := TakeHubEDIFACT(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if old != nil {
		if !reflect.DeepEqual(c.Parse, parse.Config{}) {
			return nil, fmt.Errorf("config %s: both parse: and the deprecated hub.edifact: are set; keep parse: only", path)
		}
		kd := yaml.NewDecoder(bytes.NewReader(old))
		kd.KnownFields(true)
		if err := kd.Decode(&c.Parse); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("config %s: hub.edifact: %w", path, err)
		}
		c.deprecated = append(c.deprecated, "hub.edifact is deprecated: the same settings go in the top-level parse: section")
	}
	c.deprecated = append(c.deprecated, parse.Deprecated(c.Parse)...)
	c.Path = path
	return &c, nil
}

// TakeHubEDIFACT (for the sandbox worker's own reader too) removes the deprecated hub.edifact section from the YAML
// document b (hub knows no EDI setting any more) and returns it alone (nil
// when absent) and the rest.
func TakeHubEDIFACT(b []byte) (old, rest []byte, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, b, nil
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "hub" || top.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		h := top.Content[i+1]
		for j := 0; j+1 < len(h.Content); j += 2 {
			if h.Content[j].Value != "edifact" {
				continue
			}
			if old, err = yaml.Marshal(h.Content[j+1]); err != nil {
				return nil, nil, err
			}
			h.Content = append(h.Content[:j], h.Content[j+2:]...)
			if rest, err = yaml.Marshal(&doc); err != nil {
				return nil, nil, err
			}
			return old, rest, nil
		}
	}
	return nil, b, nil
}

// SetDefaults fills in every default, including those that follow
// nats.replicas (cluster.shared, the attempt store, the ledger's replicas).
// It only fills unset fields, so it may run twice.
func (c *Config) SetDefaults() {
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 30 * time.Second
	}
	c.setClusterDefaults()
	c.Hub.SetDefaults()
	c.Parse.SetDefaults()
	c.Sandbox.UseStreams(c.Hub.Streams)
	c.Sandbox.UseClaimCheck(c.Hub.ClaimCheck.Bucket, c.Hub.ClaimCheck.UploadStream)
	c.Sandbox.SetDefaults()
	c.API.SetDefaults()
	c.Partners.SetDefaults()
	c.Runtime.setDefaults()
}

// Validate refuses every combination that cannot work (after SetDefaults):
// the refusals `edihub serve` gives before it opens anything.
func (c *Config) Validate() error {
	if err := c.NATS.validateAuth(); err != nil {
		return err
	}
	if err := c.validateCluster(); err != nil {
		return err
	}
	if err := c.Hub.Validate(); err != nil {
		return err
	}
	c.Parse.SetDefaults()
	if err := c.Parse.Validate(); err != nil {
		return fmt.Errorf("invalid config: parse: %w", err)
	}
	if c.Bridge.Enabled() {
		if err := c.Bridge.Validate(); err != nil {
			return fmt.Errorf("bridge: %s", oneLine(err.Error()))
		}
	}
	if err := c.Sandbox.Validate(); err != nil {
		return err
	}
	if err := c.API.Validate(); err != nil {
		return err
	}
	if err := c.Partners.Validate(); err != nil {
		return fmt.Errorf("partners: %s", oneLine(err.Error()))
	}
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

// Complete is SetDefaults then Validate.
func (c *Config) Complete() error {
	c.SetDefaults()
	return c.Validate()
}

// oneLine folds an error or text onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

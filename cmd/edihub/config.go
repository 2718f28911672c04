package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/edihub/edihub/bridge"
	"github.com/edihub/edihub/hub"
)

// fileConfig is the YAML file `serve --config` reads; configs/edihub.yaml
// documents every field with its default. Flags override the file.
type fileConfig struct {
	DataDir string     `yaml:"data_dir"`
	NATS    natsConfig `yaml:"nats"`
	HTTP    httpConfig `yaml:"http"`
	Log     logConfig  `yaml:"log"`
	Hub     hub.Config `yaml:"hub"`
	// Bridge routes Kafka topics in and out; serve runs it when any route
	// is configured.
	Bridge bridge.Config `yaml:"bridge"`
}

type natsConfig struct {
	// Listen is where the embedded server accepts NATS clients.
	Listen string `yaml:"listen"`
	// URL, when set, uses an external NATS server or cluster instead of
	// the embedded one.
	URL string `yaml:"url"`
	// MaxPayload of the embedded server, in bytes.
	MaxPayload int32 `yaml:"max_payload"`
}

type httpConfig struct {
	Listen string `yaml:"listen"`
}

type logConfig struct {
	Level  string `yaml:"level"`  // trace, debug, info, warn, error
	Format string `yaml:"format"` // auto (pretty on a terminal), json, pretty
}

func defaultFileConfig() fileConfig {
	c := fileConfig{DataDir: "data"}
	c.NATS.Listen = "127.0.0.1:4222"
	c.NATS.MaxPayload = 32 << 20
	c.HTTP.Listen = "127.0.0.1:8080"
	c.Log.Level = "info"
	c.Log.Format = "auto"
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
	return c, nil
}

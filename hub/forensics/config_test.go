package forensics

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestForensicsConfigDefaultsAndYAML(t *testing.T) {
	var c Config
	if err := yaml.Unmarshal([]byte("memory_limit: 512MiB\ncpu_limit: 10s\nenabled: false\n"), &c); err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.MemoryLimit != 512<<20 || c.CPULimit != 10*time.Second || c.Timeout != 15*time.Second || c.IsEnabled() ||
		c.Concurrency != 1 || c.Bucket != "forensic" || c.TicketBucket != "tickets" {
		t.Fatalf("config %+v", c)
	}
	c.Concurrency, c.Timeout = 0, time.Second
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "concurrency") || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("validate: %v", err)
	}
	if _, err := ParseByteSize("12 parsecs"); err == nil {
		t.Fatal("bad size accepted")
	}
}

func TestChildInputRoundTrip(t *testing.T) {
	payload := []byte("UNA:+.? '\n\x00line\n")
	in, err := encodeChildInput(preamble{Stage: "parse", Headers: map[string][]string{"x-error-msg": {"a\nb"}}}, payload)
	if err != nil {
		t.Fatal(err)
	}
	p, got, err := decodeChildInput(in)
	if err != nil || string(got) != string(payload) || p.Stage != "parse" || p.Headers["x-error-msg"][0] != "a\nb" {
		t.Fatalf("%+v %q %v", p, got, err)
	}
}

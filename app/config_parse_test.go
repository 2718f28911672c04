package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func loadYAML(t *testing.T, text string) (*Config, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadConfig(p)
}

// The parse settings are the top-level parse: section; the old hub.edifact
// is still read, with a deprecation line, and hub keeps its other keys.
func TestParseSectionAndTheDeprecatedHubEDIFACT(t *testing.T) {
	c, err := loadYAML(t, "parse:\n  max_size: 1234\n")
	if err != nil || c.Parse.MaxSize != 1234 || len(c.deprecated) != 0 {
		t.Fatalf("parse: %+v %v %v", c.Parse, c.deprecated, err)
	}
	c, err = loadYAML(t, "hub:\n  partitions: 3\n  edifact:\n    max_size: 4321\n    lenient: true\n")
	if err != nil || c.Parse.MaxSize != 4321 || !c.Parse.Lenient || c.Hub.Partitions != 3 {
		t.Fatalf("hub.edifact: %+v partitions %d %v", c.Parse, c.Hub.Partitions, err)
	}
	if len(c.deprecated) != 1 || !strings.Contains(c.deprecated[0], "hub.edifact is deprecated") {
		t.Fatalf("no deprecation line for hub.edifact: %q", c.deprecated)
	}
	if _, err := loadYAML(t, "hub:\n  edifact:\n    max_sise: 1\n"); err == nil || !strings.Contains(err.Error(), "max_sise") {
		t.Fatalf("a misspelt key under hub.edifact was accepted: %v", err)
	}
	if _, err := loadYAML(t, "parse:\n  max_size: 1\nhub:\n  edifact:\n    max_size: 2\n"); err == nil {
		t.Fatal("both parse: and hub.edifact: accepted")
	}
}

// Per-partner strictness is the partner profile's strict; the old
// parse.partners.<id>.lenient is still read, with a deprecation line.
func TestPartnerLenientIsDeprecated(t *testing.T) {
	c, err := loadYAML(t, "parse:\n  partners:\n    ACME: {lenient: true, max_size: 99}\n    BETA: {max_size: 5}\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.deprecated) != 1 || !strings.Contains(c.deprecated[0], "parse.partners.ACME.lenient is deprecated") ||
		!strings.Contains(c.deprecated[0], "strict: false") {
		t.Fatalf("deprecation lines %q", c.deprecated)
	}
	if !c.Parse.Options("ACME").Lenient || c.Parse.Options("ACME").MaxSize != 99 {
		t.Fatalf("the deprecated setting no longer applies: %+v", c.Parse.Options("ACME"))
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// INGEST must keep a message as long as the ledger names it.
func TestIngestMaxAgeBelowTheLedgerIsRefused(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hub.Retention.Ingest.MaxAge = 24 * time.Hour
	err := cfg.Complete()
	if err == nil || !strings.Contains(err.Error(), "hub.retention.ingest.max_age") || !strings.Contains(err.Error(), "ledger.ttl") {
		t.Fatalf("a 24h INGEST under a 30-day ledger: %v", err)
	}
	cfg = DefaultConfig()
	cfg.Hub.Retention.Ingest.MaxAge = 31 * 24 * time.Hour
	if err := cfg.Complete(); err != nil {
		t.Fatal(err)
	}
}

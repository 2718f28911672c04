package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// configs/edihub.yaml documents every field with its default: loading it
// must give exactly what serve runs with when given no config.
func TestExampleConfigIsTheDefaults(t *testing.T) {
	got, err := LoadConfig(filepath.Join("..", "configs", "edihub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	if err := got.Complete(); err != nil {
		t.Fatal(err)
	}
	if err := want.Complete(); err != nil {
		t.Fatal(err)
	}
	g, _ := yaml.Marshal(got)
	w, _ := yaml.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("configs/edihub.yaml differs from the defaults:\n--- file\n%s\n--- defaults\n%s", g, w)
	}
}

func TestConfigRejectsUnknownKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("hub:\n  partitons: 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(p)
	if err == nil || !strings.Contains(err.Error(), "partitons") {
		t.Fatalf("a misspelt key was accepted: %v", err)
	}
}

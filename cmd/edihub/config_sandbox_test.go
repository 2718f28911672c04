package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The sandbox worker reads the deprecated hub.edifact section too.
func TestSandboxReadsTheDeprecatedHubEDIFACT(t *testing.T) {
	s, err := loadSandboxConfig(writeTemp(t, "hub:\n  edifact:\n    max_size: 777\n"))
	if err != nil || s.Parse.MaxSize != 777 {
		t.Fatalf("the sandbox worker does not read hub.edifact: %+v %v", s.Parse, err)
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

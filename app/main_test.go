package app

import (
	"os"
	"testing"
)

// The sandbox worker the application starts is "its own executable": in
// these tests this test binary, which exits at once as `sandbox`, so the
// supervisor's restart loop is exercised (never the tests recursively).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox" {
		os.Exit(3)
	}
	os.Exit(m.Run())
}

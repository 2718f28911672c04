package main

import (
	"context"
	"os"
	"testing"
)

// When the forensics worker in a test starts "its own executable" as the
// analysis child, that executable is this test binary: the sandbox
// protocol variable (set by sandbox.Run, never inherited) makes TestMain
// run the real command line, i.e. `edihub sandbox exec --stage S`.
// Without it, `sandbox` is startSandboxChild's worker: see below.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox" {
		if os.Getenv("EDIHUB_SANDBOX_PROTOCOL") != "" {
			os.Exit(run(context.Background(), &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
		}
		// startSandboxChild's worker: die at once, so the supervisor's
		// restart loop is exercised (never run the tests recursively).
		os.Exit(3)
	}
	os.Exit(m.Run())
}

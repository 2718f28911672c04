package test

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/edihub/edihub"

// allowedDeps says which packages of this module each package may depend
// on, directly or through others. Imports point one way:
//
//	cmd → app → hub/api → hub/ops ──┐  (hub/ops → client: a replay's outcome)
//	            hub/forensics ──────┴→ parse → hub → hub/leakprobe → alert
//	            (app, forensics) → drill ──────↗ ├→ hub/lanes, hub/headers, hub/metrics, hub/failure
//	                                           ├→ claimcheck (its settings)
//	                                           └→ audit → leaves
//	            bridge, partner, ubl, claimcheck ──────────────→ leaves
//	cmd → client ──────────────────────────────────────────→ leaves
//	(hubclient, for downstream apps: wire only)
//	                                    (wire, escape, jetstream, counter,
//	                                     ledger, edifact, sandbox)
//
// hub imports no EDI package (ledger never; edifact only until
// hub/copies.go stops peeking at control references): parse owns the EDI
// decision. A package missing here fails the test: a new room needs a
// decision.
var allowedDeps = map[string][]string{
	"wire":                           {},
	"escape":                         {},
	"edifact":                        {"escape"},
	"ubl":                            {"escape", "wire"},
	"edifact/directory":              {"edifact", "escape"},
	"edifact/edifacttest":            {},
	"edifact/directory/internal/gen": {"edifact/directory", "edifact", "escape"},
	"sandbox":                        {},
	"jetstream":                      {},
	"counter":                        {"jetstream"},
	"ledger":                         {"jetstream"},
	"lease":                          {"jetstream"},
	"alert":                          {"wire", "escape", "jetstream"},
	"audit":                          {"wire", "escape", "jetstream"},
	"hub/leakprobe":                  {"alert", "wire", "escape", "jetstream"},
	"hub/lanes":                      {}, // a partition's messages in hand: nothing of the module
	"hub/headers":                    {"wire", "escape"},
	"hub/failure":                    {"wire", "jetstream"},
	"hub/metrics":                    {"alert", "hub/leakprobe", "wire", "escape", "jetstream"},
	"hub":                            {"hub/failure", "alert", "hub/leakprobe", "hub/lanes", "hub/headers", "hub/metrics", "audit", "wire", "escape", "jetstream", "counter", "claimcheck"},
	"drill":                          {"hub", "hub/lanes", "hub/failure", "hub/headers", "hub/metrics", "alert", "hub/leakprobe", "audit", "wire", "escape", "jetstream", "counter", "claimcheck"},
	"parse":                          {"hub", "hub/lanes", "hub/failure", "hub/headers", "hub/metrics", "alert", "hub/leakprobe", "audit", "wire", "escape", "jetstream", "counter", "claimcheck", "ledger", "edifact", "ubl"},
	"hub/ops":                        {"client", "parse", "hub", "hub/lanes", "hub/failure", "hub/headers", "hub/metrics", "alert", "hub/leakprobe", "audit", "wire", "escape", "jetstream", "counter", "claimcheck", "hubclient", "ledger", "edifact", "ubl"},
	"hub/forensics":                  {"parse", "hub", "hub/lanes", "hub/failure", "hub/headers", "hub/metrics", "drill", "alert", "hub/leakprobe", "audit", "wire", "escape", "jetstream", "counter", "claimcheck", "ledger", "edifact", "sandbox", "ubl"},
	"hub/api":                        {"client", "hub/ops", "hub/forensics", "parse", "sandbox", "hub", "hub/lanes", "hub/failure", "hub/headers", "hub/metrics", "drill", "alert", "hub/leakprobe", "audit", "wire", "escape", "jetstream", "counter", "claimcheck", "hubclient", "ledger", "edifact", "ubl"},
	"hub/console":                    {},
	"bridge":                         {"wire", "escape", "jetstream", "hubclient"},
	"claimcheck":                     {"wire", "jetstream"},
	"hubclient":                      {"wire"}, // for downstream apps: never the hub
	"client":                         {"wire", "escape", "jetstream"},
	"partner":                        {"wire", "escape", "jetstream", "edifact", "edifact/directory", "ubl"},
	"app": {"client", "hub/api", "hub/console", "hub/ops", "hub/forensics", "parse", "bridge", "partner", "lease", "sandbox", "hub", "hub/lanes", "hub/failure", "hub/headers", "hub/metrics", "drill", "alert", "hub/leakprobe", "audit", "claimcheck", "hubclient",
		"wire", "escape", "jetstream", "counter", "ledger", "edifact", "edifact/directory", "ubl"}, // the application: everything below cmd
	"app/apptest": {"client", "app", "hub/api", "hub/console", "hub/ops", "hub/forensics", "parse", "bridge", "partner", "lease", "sandbox", "hub", "hub/lanes", "hub/failure", "hub/headers", "hub/metrics", "drill", "alert", "hub/leakprobe", "audit", "claimcheck", "hubclient",
		"wire", "escape", "jetstream", "counter", "ledger", "edifact", "edifact/directory", "jetstream/jetstreamtest", "ubl"},
	"cmd/edihub":              nil, // the binary: flags, output and app
	"test":                    nil,
	"jetstream/jetstreamtest": {"jetstream", "wire"},
	"internal/testcert":       {},
	"hub/hubtest":             {"parse", "hub", "hub/lanes", "hub/failure", "hub/headers", "hub/metrics", "alert", "hub/leakprobe", "audit", "wire", "escape", "jetstream", "counter", "claimcheck", "ledger", "edifact", "jetstream/jetstreamtest", "ubl"},
}

// testKits may be imported by tests only.
var testKits = []string{"jetstream/jetstreamtest", "hub/hubtest", "app/apptest", "internal/testcert", "edifact/edifacttest"}

type listedPackage struct {
	ImportPath string
	Deps       []string
}

// listPackages runs `go list -deps`-style listing of every package of the
// module with its transitive dependencies (without test files).
func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// TestImportsPointOneWay fails when a package depends on a package of the
// module that its row in allowedDeps does not list: a leaf importing hub,
// hub importing the runbook or the forensic worker, and so on.
func TestImportsPointOneWay(t *testing.T) {
	for _, p := range listPackages(t) {
		name, _ := rel(p.ImportPath)
		allowed, known := allowedDeps[name]
		if !known {
			t.Errorf("package %s has no row in allowedDeps (test/arch_test.go): say what it may import", name)
			continue
		}
		for _, d := range p.Deps {
			dep, ours := rel(d)
			if !ours {
				continue
			}
			if slices.Contains(testKits, dep) && !slices.Contains(testKits, name) {
				t.Errorf("%s imports the test kit %s; only tests may", name, dep)
			}
			if allowed != nil && !slices.Contains(allowed, dep) {
				t.Errorf("%s depends on %s: imports must point one way (allowed: %v)", name, dep, allowed)
			}
		}
	}
}

// TestAllowedDepsPointOneWay keeps the table itself one-way: no two rooms
// may each import the other, so an upward import (hub → parse, parse →
// hub/ops) cannot be allowed by adding it to a row; and hub, which runs
// any stages, imports neither parse nor ledger.
func TestAllowedDepsPointOneWay(t *testing.T) {
	for a, deps := range allowedDeps {
		for _, b := range deps {
			if slices.Contains(allowedDeps[b], a) {
				t.Errorf("%s and %s may each import the other", a, b)
			}
		}
	}
	for _, up := range []string{"parse", "ledger", "partner", "edifact", "edifact/directory", "ubl", "hub/ops", "hub/forensics"} {
		if slices.Contains(allowedDeps["hub"], up) {
			t.Errorf("hub may import %s: the EDI decision is parse's", up)
		}
	}
}

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
//	cmd → hub/api → hub/ops ─┐
//	      hub/forensics ─────┼→ hub/parse → hub → hub/leakprobe → hub/alert
//	      bridge ────────────┘                  └→ hub/audit → leaves
//	                                    (wire, escape, jetstream, counter,
//	                                     ledger, edifact, sandbox)
//
// A package missing here fails the test: a new room needs a decision.
var allowedDeps = map[string][]string{
	"wire":                           {},
	"escape":                         {},
	"edifact":                        {"escape"},
	"edifact/directory":              {"edifact", "escape"},
	"edifact/directory/internal/gen": {"edifact/directory", "edifact", "escape"},
	"sandbox":                        {},
	"jetstream":                      {},
	"counter":                        {"jetstream"},
	"ledger":                         {"jetstream"},
	"lease":                          {"jetstream"},
	"hub/alert":                      {"wire", "escape", "jetstream"},
	"hub/audit":                      {"wire", "escape", "jetstream"},
	"hub/leakprobe":                  {"hub/alert", "wire", "escape", "jetstream"},
	"hub":                            {"hub/alert", "hub/leakprobe", "hub/audit", "wire", "escape", "jetstream", "counter", "ledger", "edifact"},
	"hub/parse":                      {"hub", "hub/alert", "hub/leakprobe", "hub/audit", "wire", "escape", "jetstream", "counter", "ledger", "edifact"},
	"hub/ops":                        {"hub/parse", "hub", "hub/alert", "hub/leakprobe", "hub/audit", "wire", "escape", "jetstream", "counter", "ledger", "edifact"},
	"hub/forensics":                  {"hub/parse", "hub", "hub/alert", "hub/leakprobe", "hub/audit", "wire", "escape", "jetstream", "counter", "ledger", "edifact", "sandbox"},
	"hub/api":                        {"hub/ops", "hub/forensics", "hub/parse", "sandbox", "hub", "hub/alert", "hub/leakprobe", "hub/audit", "wire", "escape", "jetstream", "counter", "ledger", "edifact"},
	"hub/console":                    {},
	"bridge":                         {"wire", "escape", "jetstream"},
	"partner":                        {"wire", "escape", "jetstream", "edifact", "edifact/directory"},
	"cmd/edihub":                     nil, // the binary wires everything
	"test":                           nil,
	"jetstream/jetstreamtest":        {"jetstream", "wire"},
	"internal/testcert":              {},
	"hub/hubtest":                    {"hub/parse", "hub", "hub/alert", "hub/leakprobe", "hub/audit", "wire", "escape", "jetstream", "counter", "ledger", "edifact", "jetstream/jetstreamtest"},
}

// testKits may be imported by tests only.
var testKits = []string{"jetstream/jetstreamtest", "hub/hubtest", "internal/testcert"}

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

package directory

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// TestGolden validates each testdata/golden/*.edi in lenient and strict mode
// and compares the results (JSON) with the .golden file beside it; -update
// rewrites them. The inputs are written for this package.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.edi"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	set := builtin(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string][]*Result{}
			for _, s := range []Strictness{Lenient, Strict} {
				v, _ := NewValidator(set, &Options{Strictness: s})
				out[string(s)] = []*Result{}
				if _, err := edifact.Walk(data, nil, func(m *edifact.Message) error {
					out[string(s)] = append(out[string(s)], v.Validate(m))
					return nil
				}); err != nil {
					t.Fatalf("parse: %v", err)
				}
			}
			got, _ := json.MarshalIndent(out, "", "  ")
			got = append(got, '\n')
			golden := strings.TrimSuffix(f, ".edi") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (run go test -update and review the diff):\n%s", f, golden, got)
			}
		})
	}
}

package edifact

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// TestGolden parses each testdata/*.edi and compares the document JSON and
// the per-message JSON views with testdata/golden. Run with -update after a
// deliberate change of the JSON view, and review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.edi"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".edi")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := Parse(data, nil)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			docJSON, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var msgs []json.RawMessage
			for _, m := range doc.Messages() {
				b, err := MessageJSON(m)
				if err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, b)
			}
			msgJSON, err := json.MarshalIndent(msgs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "golden", name+".json"), docJSON)
			golden(t, filepath.Join("testdata", "golden", name+".messages.json"), msgJSON)
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output; run with -update and review the diff.\ngot:\n%s", path, got)
	}
}

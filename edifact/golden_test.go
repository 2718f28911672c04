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
			docJSON, err := indent(doc.MarshalJSON())
			if err != nil {
				t.Fatal(err)
			}
			var msgs [][]byte
			for _, m := range doc.Messages() {
				b, err := MessageJSON(m)
				if err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, b)
			}
			joined := append([]byte("["), bytes.Join(msgs, []byte(","))...)
			msgJSON, err := indent(append(joined, ']'), nil)
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
		g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := 0; i < len(g) || i < len(w); i++ {
			var gl, wl []byte
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			if !bytes.Equal(gl, wl) {
				t.Errorf("%s:%d differs (run with -update and review the diff)\n got: %s\nwant: %s", path, i+1, gl, wl)
				return
			}
		}
	}
}

// indent pretty-prints without re-escaping (json.MarshalIndent would turn
// "&" into \u0026 again).
func indent(b []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = json.Indent(&out, b, "", "  ")
	return out.Bytes(), err
}

package partner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// TestInteropIndependentParsers reads every acknowledgement the golden
// cases generate with independent implementations: the npm packages
// edifact (UN/EDIFACT) and node-x12 (X12, strict mode: control numbers and
// counts checked), run by node from testdata/interop (npm ci there; .ci/run
// does). Each must read the same segments and values as edihub's Reader.
// Skipped, saying why, where node or the packages are missing.
func TestInteropIndependentParsers(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH: the interop test needs node and `npm ci --prefix partner/testdata/interop`")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "interop"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "node-x12")); err != nil {
		t.Skip("npm packages not installed: run `npm ci --prefix partner/testdata/interop`")
	}
	setupAckFiles(t)
	out := t.TempDir()
	var files []string
	for _, c := range ackCases() {
		acks, _ := caseAcks(t, c)
		for i, a := range acks {
			f := filepath.Join(out, c.name+"-"+strconv.Itoa(i)+".edi")
			if err := os.WriteFile(f, a.Data, 0o600); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	for _, f := range []string{"invoic_ok.edi", "x12_850.edi"} {
		p := acmeProfile()
		if strings.HasPrefix(f, "x12") {
			x12Partner(&p)
		}
		for i, a := range newRegistry(t, p).DuplicateAcks("ACME", "INGEST:42", "", read(t, f)) {
			name := filepath.Join(out, "duplicate-"+f+"-"+strconv.Itoa(i))
			if err := os.WriteFile(name, a.Data, 0o600); err != nil {
				t.Fatal(err)
			}
			files = append(files, name)
		}
	}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "parse.js")}, files...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.Bytes())
	}
	type segment struct {
		Tag      string     `json:"tag"`
		Elements [][]string `json:"elements"`
	}
	var n int
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			File     string    `json:"file"`
			Error    string    `json:"error"`
			Segments []segment `json:"segments"`
			Dropped  []string  `json:"dropped"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		n++
		data, _ := os.ReadFile(r.File)
		if r.Error != "" {
			t.Errorf("%s: the independent parser refuses it: %s\n%s", filepath.Base(r.File), r.Error, data)
			continue
		}
		var ours []segment
		rd := edifact.NewReader(bytes.NewReader(data))
		for {
			s, err := rd.Read()
			if err != nil {
				break
			}
			if slices.Contains(r.Dropped, s.Tag) {
				continue
			}
			if len(r.Dropped) > 0 && s.Tag != "ISA" && s.Tag != "IEA" {
				continue // the loose reading keeps the envelope only
			}
			seg := segment{Tag: s.Tag}
			for _, e := range s.Elements {
				seg.Elements = append(seg.Elements, slices.Clone(e))
			}
			ours = append(ours, seg)
		}
		if len(ours) != len(r.Segments) {
			t.Errorf("%s: edihub reads %d segments, the independent parser %d\n%s", filepath.Base(r.File), len(ours), len(r.Segments), data)
			continue
		}
		for i := range ours {
			if !sameSegment(ours[i].Tag, ours[i].Elements, r.Segments[i].Tag, r.Segments[i].Elements) {
				t.Errorf("%s: segment %d: edihub %v, independent %v", filepath.Base(r.File), i+1, ours[i], r.Segments[i])
			}
		}
	}
	if n != len(files) {
		t.Fatalf("the independent parser answered %d of %d files\n%s", n, len(files), stderr.Bytes())
	}
	t.Logf("%d acknowledgements read alike by edihub and the independent parsers", n)
}

// sameSegment compares two readings of a segment: trailing empty values
// do not count, and values are compared as numbers where both are (the X12
// parser reads ISA13 000000420 as 420).
func sameSegment(tagA string, a [][]string, tagB string, b [][]string) bool {
	if tagA != tagB {
		return false
	}
	flat := func(els [][]string) []string {
		var out []string
		for _, e := range els {
			out = append(out, strings.Join(e, ":"))
		}
		for len(out) > 0 && strings.Trim(out[len(out)-1], ": ") == "" {
			out = out[:len(out)-1]
		}
		return out
	}
	fa, fb := flat(a), flat(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		x, y := strings.TrimRight(fa[i], ": "), strings.TrimRight(fb[i], ": ")
		if x == y {
			continue
		}
		nx, ex := strconv.ParseUint(x, 10, 64)
		ny, ey := strconv.ParseUint(y, 10, 64)
		if ex != nil || ey != nil || nx != ny {
			return false
		}
	}
	return true
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runEdifactCmd runs "edihub edifact ..." in-process and returns the exit
// code, stdout and stderr.
func runEdifactCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := run(context.Background(), e, append([]string{"edifact"}, args...))
	return code, out.String(), errb.String()
}

func writeFiles(t *testing.T) (good, bad, lower string) {
	dir := t.TempDir()
	good = filepath.Join(dir, "good.edi")
	bad = filepath.Join(dir, "bad.edi")
	lower = filepath.Join(dir, "lower.edi")
	const unb = "UNB+UNOA:3+S+R+240101:1200+IC1'\n"
	for name, body := range map[string]string{
		good:  unb + "UNH+1+INVOIC:D:96A:UN'\nBGM+380+1'\nUNT+3+1'\nUNZ+1+IC1'\n",
		bad:   unb + "UNH+1+INVOIC:D:96A:UN'\nBGM+380+1'\nUNT+9+1'\nUNZ+1+IC1'\n",
		lower: unb + "UNH+1+INVOIC:D:96A:UN'\nFTX+AAI+++hello'\nUNT+3+1'\nUNZ+1+IC1'\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return good, bad, lower
}

func TestEdifactCheck(t *testing.T) {
	good, bad, lower := writeFiles(t)

	code, out, _ := runEdifactCmd(t, "", "check", good)
	if code != exitOK || out != "ok  "+good+"  (1 interchanges, 1 messages, 5 segments)\n" {
		t.Errorf("good: exit %d, %q", code, out)
	}

	code, out, stderr := runEdifactCmd(t, "", "check", good, bad)
	if code != exitFailed {
		t.Errorf("bad: exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "FAIL "+bad+": schema: segment 4 UNT at line 4 col 1") ||
		!strings.Contains(lines[1], "(code 29)") {
		t.Errorf("bad: %q", out)
	}
	if !strings.Contains(stderr, "1 of 2 files failed") {
		t.Errorf("stderr %q", stderr)
	}

	// Strict refuses lowercase under UNOA; --lenient (after the file) warns.
	if code, out, _ = runEdifactCmd(t, "", "check", lower); code != exitFailed || !strings.Contains(out, "outside the UNOA repertoire") {
		t.Errorf("lower strict: exit %d %q", code, out)
	}
	if code, out, _ = runEdifactCmd(t, "", "check", lower, "--lenient"); code != exitOK || !strings.Contains(out, "warning: byte 'h'") {
		t.Errorf("lower lenient: exit %d %q", code, out)
	}

	// --json: one object per file, with the error position.
	code, out, _ = runEdifactCmd(t, "", "check", "--json", good, bad)
	if code != exitFailed {
		t.Errorf("json: exit %d", code)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var res []map[string]any
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		res = append(res, m)
	}
	if len(res) != 2 || res[0]["ok"] != true || res[0]["messages"] != 1.0 || res[1]["ok"] != false ||
		res[1]["code"] != 29.0 || res[1]["tag"] != "UNT" || res[1]["segment"] != 4.0 || res[1]["cause"] != "schema" {
		t.Errorf("json: %v", res)
	}

	// The size limit refuses before parsing.
	if code, out, _ = runEdifactCmd(t, "", "check", "--max-size", "10", good); code != exitFailed || !strings.Contains(out, "over the limit of 10") {
		t.Errorf("max-size: exit %d %q", code, out)
	}
	// stdin.
	if code, out, _ = runEdifactCmd(t, "UNB+UNOA:3+S+R+1:1+1'UNH+1+X:D:96A:UN'UNT+2+1'UNZ+1+1'", "check", "-"); code != exitOK || !strings.HasPrefix(out, "ok  -  (1 interchanges") {
		t.Errorf("stdin: exit %d %q", code, out)
	}
}

func TestEdifactUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"frobnicate"}, {"check"}, {"json"}, {"check", "--max-size", "-5", "x"}, {"check", "--nope", "x"}} {
		if code, _, _ := runEdifactCmd(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, out, _ := runEdifactCmd(t, "", "check", filepath.Join(t.TempDir(), "missing.edi")); code != exitUsage || !strings.HasPrefix(out, "FAIL ") {
		t.Errorf("missing file: exit %d %q", code, out)
	}
}

func TestEdifactJSON(t *testing.T) {
	good, bad, _ := writeFiles(t)
	code, out, _ := runEdifactCmd(t, "", "json", good)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Standard     string `json:"standard"`
		Interchanges []struct {
			ControlRef string `json:"controlRef"`
			Messages   []struct {
				Type     string `json:"type"`
				Segments []struct {
					Tag      string     `json:"tag"`
					Elements [][]string `json:"elements"`
				} `json:"segments"`
			} `json:"messages"`
		} `json:"interchanges"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if doc.Standard != "EDIFACT" || doc.Interchanges[0].ControlRef != "IC1" || doc.Interchanges[0].Messages[0].Type != "INVOIC" ||
		doc.Interchanges[0].Messages[0].Segments[1].Elements[0][0] != "380" || !strings.Contains(out, "\n  ") {
		t.Errorf("json view: %s", out)
	}
	if code, _, stderr := runEdifactCmd(t, "", "json", bad); code != exitFailed || !strings.Contains(stderr, "code 29") {
		t.Errorf("bad: exit %d %q", code, stderr)
	}
}

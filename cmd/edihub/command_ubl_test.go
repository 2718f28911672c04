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

func ublCorpus(t *testing.T) string {
	t.Helper()
	for _, d := range []string{os.Getenv("EDIHUB_UBL_CORPUS"), "../../shared/ubl", "../../../shared/ubl", "../../../../shared/ubl"} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "SOURCES.tsv")); err == nil {
			return d
		}
	}
	t.Skip("UBL corpus not found (EDIHUB_UBL_CORPUS)")
	return ""
}

func runUBLCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := run(context.Background(), e, append([]string{"ubl"}, args...))
	return code, out.String() + errb.String()
}

func TestUBLCommands(t *testing.T) {
	dir := ublCorpus(t)
	good := filepath.Join(dir, "valid", "invopop__gobl.ubl__invoice-complete.xml")
	totals := filepath.Join(dir, "invalid", "made-here__totals-do-not-add-up.xml")
	xxe := filepath.Join(dir, "invalid", "made-here__doctype-external-entity.xml")

	if code, out := runUBLCmd(t, "check", good); code != exitOK || !strings.HasPrefix(out, "ok  ") || !strings.Contains(out, "INVOICE") {
		t.Errorf("check good: exit %d %q", code, out)
	}
	if code, out := runUBLCmd(t, "check", xxe); code != exitFailed || !strings.Contains(out, "DOCTYPE refused") || !strings.Contains(out, "line 2, column 1") {
		t.Errorf("check xxe: exit %d %q", code, out)
	}
	if code, out := runUBLCmd(t, "validate", "--profile", "peppol", good); code != exitOK {
		t.Errorf("validate good: exit %d %q", code, out)
	}
	code, out := runUBLCmd(t, "validate", totals, "--json")
	if code != exitFailed {
		t.Fatalf("validate totals: exit %d %q", code, out)
	}
	var rep ublReport
	if err := json.Unmarshal([]byte(out[:strings.Index(out, "\n")+1]), &rep); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if len(rep.Files) != 1 || rep.Failed != 1 || rep.Files[0].Cause != "business" || len(rep.Files[0].Findings) != 1 ||
		rep.Files[0].Findings[0].Rule != "BR-CO-16" || rep.Files[0].Findings[0].XPath != "/Invoice/cac:LegalMonetaryTotal" {
		t.Errorf("validate --json: %+v", rep)
	}
	code, out = runUBLCmd(t, "json", good)
	var view map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &view) != nil || view["type"] != "INVOICE" {
		t.Errorf("json: exit %d %.200q", code, out)
	}
	if code, _ := runUBLCmd(t, "validate", "--strictness", "loose", good); code != exitUsage {
		t.Errorf("bad strictness: exit %d", code)
	}
}

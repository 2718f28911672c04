package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validateUNB = "UNA:+.? 'UNB+UNOC:3+S+R+240101:1200+IC1'"

func TestEdifactValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.edi")
	bad := filepath.Join(dir, "bad.edi")
	code := filepath.Join(dir, "code.edi")
	for name, body := range map[string]string{
		good: validateUNB + "UNH+1+ORDERS:D:96A:UN'BGM+220+PO1+9'DTM+137:20200101:102'UNS+S'UNT+5+1'UNZ+1+IC1'",
		// BGM missing; a Latin-1 byte in a value that is too long.
		bad: validateUNB + "UNH+1+ORDERS:D:96A:UN'DTM+137:2020010120200101202001012020010120200101\xe9:102'UNS+S'UNT+4+1'UNZ+1+IC1'",
		// 1001 "ZZ9" is not in the code list: a warning unless strict.
		code: validateUNB + "UNH+1+ORDERS:D:96A:UN'BGM+ZZ9+PO1+9'DTM+137:20200101:102'UNS+S'UNT+5+1'UNZ+1+IC1'",
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exit, out, _ := runEdifactCmd(t, "", "validate", good)
	if exit != exitOK || !strings.HasPrefix(out, "ok   "+good+"  (1 message, 1 validated, 0 errors, 0 warnings)") {
		t.Errorf("good: exit %d, %q", exit, out)
	}
	exit, out, _ = runEdifactCmd(t, "", "validate", bad)
	if exit != exitFailed || !strings.Contains(out, "FAIL "+bad) || !strings.Contains(out, "mandatory segment BGM is missing (code 13)") ||
		!strings.Contains(out, `..." is 41 long, at most 35 allowed (code 39)`) {
		t.Errorf("bad: exit %d, %q", exit, out)
	}
	exit, out, _ = runEdifactCmd(t, "", "validate", code)
	if exit != exitOK || !strings.Contains(out, "warning: ") || !strings.Contains(out, "(code 12)") {
		t.Errorf("code lenient: exit %d, %q", exit, out)
	}
	exit, out, _ = runEdifactCmd(t, "", "validate", "--strictness", "strict", code)
	if exit != exitFailed || !strings.Contains(out, "error: ") {
		t.Errorf("code strict: exit %d, %q", exit, out)
	}
	if exit, out, _ = runEdifactCmd(t, "", "validate", "--strictness", "off", bad); exit != exitOK {
		t.Errorf("off: exit %d, %q", exit, out)
	}
	if exit, _, errOut := runEdifactCmd(t, "", "validate", "--strictness", "loose", good); exit != exitUsage || !strings.Contains(errOut, "strict, lenient or off") {
		t.Errorf("bad strictness: exit %d %q", exit, errOut)
	}
	// stdin, and a syntax error before any message.
	if exit, out, _ = runEdifactCmd(t, "UNB+UNOA:3+S+R+240101:1200+IC1'UNH+1+ORDERS:D:96A:UN'", "validate", "-"); exit != exitFailed || !strings.Contains(out, "FAIL -: schema:") {
		t.Errorf("stdin: exit %d, %q", exit, out)
	}
}

func TestEdifactValidateJSON(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.edi")
	os.WriteFile(bad, []byte(validateUNB+"UNH+1+ORDERS:D:96A:UN'DTM+137:20200101:102'UNS+S'UNT+4+1'UNZ+1+IC1'"), 0o644)
	exit, out, _ := runEdifactCmd(t, "", "validate", "--json", bad)
	var rep struct {
		Strictness string `json:"strictness"`
		Files      []struct {
			OK       bool `json:"ok"`
			Errors   int  `json:"errors"`
			Messages []struct {
				Directory string `json:"directory"`
				Findings  []struct {
					Code    int    `json:"code"`
					Segment int    `json:"segment"`
					Tag     string `json:"tag"`
					Missing string `json:"missing"`
				} `json:"findings"`
			} `json:"messages"`
		} `json:"files"`
		Failed int `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || exit != exitFailed {
		t.Fatalf("exit %d, %v: %q", exit, err, out)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("not one document: %q", out)
	}
	f := rep.Files[0]
	if rep.Strictness != "lenient" || rep.Failed != 1 || f.OK || f.Errors != 1 || f.Messages[0].Directory != "D96A" {
		t.Fatalf("%+v", rep)
	}
	if fd := f.Messages[0].Findings[0]; fd.Code != 13 || fd.Segment != 2 || fd.Tag != "DTM" || fd.Missing != "BGM" {
		t.Fatalf("%+v", fd)
	}
}

// --directory-dir adds a directory in the XML layout at run time.
func TestEdifactValidateDirectoryDir(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "D11Z")
	os.MkdirAll(filepath.Join(d, "messages"), 0o755)
	os.WriteFile(filepath.Join(d, "segments.xml"), []byte(`<segments><segment id="AAA"><data_element id="9001" required="true" type="n" maxlength="3"/></segment></segments>`), 0o644)
	os.WriteFile(filepath.Join(d, "messages", "testms.xml"), []byte(`<message><defaults><data_element id="0065" value="TESTMS"/><data_element id="0052" value="D"/><data_element id="0054" value="11Z"/><data_element id="0051" value="UN"/></defaults>
<segment id="UNH" maxrepeat="1" required="true"/><segment id="AAA" maxrepeat="1" required="true"/><segment id="UNT" maxrepeat="1" required="true"/></message>`), 0o644)
	in := filepath.Join(root, "in.edi")
	os.WriteFile(in, []byte(validateUNB+"UNH+1+TESTMS:D:11Z:UN'AAA+12X'UNT+3+1'UNZ+1+IC1'"), 0o644)
	if exit, out, _ := runEdifactCmd(t, "", "validate", in); exit != exitOK || !strings.Contains(out, "0 validated") {
		t.Errorf("without the folder: exit %d %q", exit, out)
	}
	exit, out, _ := runEdifactCmd(t, "", "validate", "--directory-dir", root, in)
	if exit != exitFailed || !strings.Contains(out, "not a number (code 37)") {
		t.Errorf("with the folder: exit %d %q", exit, out)
	}
	if exit, _, errOut := runEdifactCmd(t, "", "validate", "--directory-dir", t.TempDir(), in); exit != exitUsage || !strings.Contains(errOut, "hint:") {
		t.Errorf("empty folder: exit %d %q", exit, errOut)
	}
}

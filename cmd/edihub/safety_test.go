package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/wire"
)

// A header with a bidi override and a one-byte CSI reaches `dlq inspect
// --json` as \u202e and \u009b: the same data for jq, nothing for a
// terminal. The runbook's own punctuation in an error is printed as is.
func TestDLQInspectJSONEscapesHeadersAndKeepsPunctuation(t *testing.T) {
	d := startDLQHub(t)
	name := "inv\u202efdp.edi\u009b2J"
	m := &nats.Msg{Subject: wire.IngestSubject("ACME"), Data: []byte(hostilePayload), Header: nats.Header{}}
	m.Header.Set(wire.HdrFilename, name)
	if _, err := d.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	d.waitDLQ(t, 1)
	out, errOut, code := d.cmd(t, "dlq", "inspect", "--json")
	if code != 0 {
		t.Fatalf("inspect --json: %d %s", code, errOut)
	}
	assertNoControls(t, out)
	if !strings.Contains(out, `\u202e`) || !strings.Contains(out, `\u009b`) {
		t.Fatalf("inspect --json lacks \\u202e or \\u009b:\n%s", out)
	}
	var res struct{ Messages []ops.Entry }
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Messages) != 1 {
		t.Fatalf("inspect --json is not the same data: %v\n%s", err, out)
	}
	found := false
	for _, vs := range res.Messages[0].Headers {
		for _, v := range vs {
			found = found || v == name
		}
	}
	if !found {
		t.Fatalf("header %q not in %v", name, res.Messages[0].Headers)
	}

	_, errOut, code = d.cmd(t, "dlq", "show", "DLQ:99")
	if code != 1 || !strings.Contains(errOut, "— the audit trail says which") {
		t.Fatalf("show DLQ:99: exit %d, the CLI's own dash escaped or missing: %q", code, errOut)
	}
}

func TestSendRefusesPartnerIDsThatAreNotTokens(t *testing.T) {
	for _, p := range []string{"A\x1b[2J", "A B", "A.B", "É", strings.Repeat("P", 65), ""} {
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader("x"), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		code := run(context.Background(), e, []string{"send", "--server", "nats://127.0.0.1:1", "--partner", p, "-"})
		if code != exitUsage || !strings.Contains(errb.String(), "partner id") {
			t.Fatalf("--partner %q: exit %d, %q", p, code, errb.String())
		}
		assertNoControls(t, errb.String())
	}
}

// File names are untrusted too: `edifact check` and `send` print them
// escaped, and --json carries C1 and bidi controls as \uXXXX.
func TestFileNamesAreEscaped(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a\x1b[2J\u009b\u202eb.edi")
	if err := os.WriteFile(name, []byte("UNB+UNOA:3+S+R+240101:1200+IC1'UNZ+9+IC1'"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runEdifactCmd(t, "", "check", name)
	if code != exitFailed || !strings.Contains(out, `a\x1B[2J\xC2\x9B\xE2\x80\xAEb.edi`) {
		t.Fatalf("check: exit %d\n%s%s", code, out, errOut)
	}
	assertNoControls(t, out+errOut)
	code, out, _ = runEdifactCmd(t, "", "check", "--json", name)
	var rep checkReport
	if code != exitFailed || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Files) != 1 || rep.Files[0].File != name {
		t.Fatalf("check --json: exit %d %s", code, out)
	}
	assertNoControls(t, out)

	var sout, serr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &sout, stderr: &serr, getenv: func(string) string { return "" }}
	missing := filepath.Join(dir, "gone\x1b]0;x\x07.edi")
	srv := startDLQHub(t)
	code = run(context.Background(), e, []string{"send", "--server", srv.url, "--partner", "ACME", name})
	if code != exitOK {
		t.Fatalf("send: exit %d\n%s%s", code, sout.String(), serr.String())
	}
	// A file that is not there is a usage mistake, said before sending.
	code = run(context.Background(), e, []string{"send", "--server", srv.url, "--partner", "ACME", name, missing})
	if code != exitUsage {
		t.Fatalf("send of a missing file: exit %d\n%s%s", code, sout.String(), serr.String())
	}
	assertNoControls(t, sout.String()+serr.String())
	if !strings.Contains(sout.String(), `a\x1B[2J`) || !strings.Contains(sout.String(), " → ") || !strings.Contains(serr.String(), `gone\x1B]0;x\x07.edi`) {
		t.Fatalf("send output:\n%s%s", sout.String(), serr.String())
	}
}

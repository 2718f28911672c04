package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/app"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// latin1Invoice is a valid UNOC (ISO 8859-1) interchange naming BÜTTNER
// (0xDC is Ü in Latin-1).
const latin1Invoice = "UNB+UNOC:3+SENDER1:14+RECEIVER1:14+261130:1200+L1'UNH+1+INVOIC:D:96A:UN'" +
	"BGM+380+L1+9'NAD+BY+++B\xdcTTNER GMBH'UNT+4+1'UNZ+1+L1'"

// startTextHub runs the hub with a validate stage whose error text has
// the hub's own punctuation (an em-dash) and a control byte.
func startTextHub(t *testing.T) *dlqHub {
	t.Helper()
	validate := hub.Stage{Name: "validate", Handle: func(ctx context.Context, m *hub.Message) error {
		return hub.PermanentError(wire.CauseBusiness, errors.New("buyer unknown — check NAD\x00 of BÜTTNER"))
	}}
	a := startApp(t, func(c *app.Config) { c.Hub.Partitions = 1 }, &app.Env{Stages: []hub.Stage{validate}})
	_, j := jetstreamtest.Connect(t, a.NATSURL())
	return &dlqHub{url: a.NATSURL(), js: j}
}

// Through dlq ls and dlq show: the hub's text is escaped once (— and Ü
// as they are, the NUL as \x00, never \\x00 or \xE2\x80\x94), and the
// Latin-1 payload reads as Latin-1 (BÜTTNER, not B\xDCTTNER).
func TestDLQShowEscapesOnceAndDecodesLatin1(t *testing.T) {
	d := startTextHub(t)
	if _, err := d.js.PublishMsg(context.Background(), &nats.Msg{Subject: wire.IngestSubject("ACME"), Data: []byte(latin1Invoice)}); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return d.count(t, "DLQ") == 1 })

	out, errOut, code := d.cmd(t, "dlq", "show", "DLQ:1")
	if code != 0 {
		t.Fatalf("show: %d %s %s", code, out, errOut)
	}
	for _, want := range []string{"buyer unknown — check NAD\\x00 of BÜTTNER", "NAD+BY+++BÜTTNER GMBH'", "read as ISO-8859-1, as its UNB declares UNOC"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{`\\x`, `\xE2\x80\x94`, `\xDC`, `\xC3\x9C`, "\x00"} {
		if strings.Contains(out, bad) {
			t.Errorf("show has %q:\n%s", bad, out)
		}
	}
	out, _, code = d.cmd(t, "dlq", "inspect", "--cause", "business")
	if code != 0 || !strings.Contains(out, "buyer unknown — check NAD\\x00") || strings.Contains(out, `\\x`) {
		t.Fatalf("inspect: %d\n%s", code, out)
	}
}

// dlq edit checks the edit as dlq replay --dry-run would, refuses a broken
// or empty one unless forced (empty never), and opens no editor without a
// terminal.
func TestDLQEditChecksAndNeedsATerminal(t *testing.T) {
	d := startDLQHub(t)
	broken := strings.Replace(edifacttest.Invoice("C1"), "UNT+3+1", "UNT+9+1", 1)
	d.publish(t, "ACME", broken)
	d.waitDLQ(t, 1)
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// No $EDITOR, stdin is no terminal (a strings.Reader): refused with the fix.
	t.Setenv("TEST_EDITOR", "")
	if _, errOut, code := d.cmd(t, "dlq", "edit", "DLQ:1"); code != 2 || !strings.Contains(errOut, "--from-file") || !strings.Contains(errOut, "not a terminal") {
		t.Fatalf("edit without editor or terminal: %d %s", code, errOut)
	}
	for _, c := range []struct{ name, data, want string }{
		{"garbage.edi", "garbage", "would be dead-lettered again (schema)"},
		{"still.edi", strings.Replace(broken, "UNT+9+1", "UNT+8+1", 1), "would be dead-lettered again (schema)"},
		{"empty.edi", " \n", "empty"},
	} {
		_, errOut, code := d.cmd(t, "dlq", "edit", "DLQ:1", "--from-file", write(c.name, c.data))
		if code != 1 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "nothing stored") {
			t.Fatalf("edit %s: %d %s", c.name, code, errOut)
		}
	}
	if _, errOut, code := d.cmd(t, "dlq", "edit", "DLQ:1", "--force", "--from-file", write("empty2.edi", "")); code != 1 || !strings.Contains(errOut, "empty") {
		t.Fatalf("forced empty edit: %d %s", code, errOut)
	}
	if n := d.count(t, "DLQ"); n != 1 {
		t.Fatalf("refused edits stored something: DLQ has %d", n)
	}
	out, errOut, code := d.cmd(t, "dlq", "edit", "DLQ:1", "--from-file", write("fixed.edi", edifacttest.Invoice("C1")), "--reason", "UNT count — for BÜTTNER")
	if code != 0 || !strings.Contains(out, "DLQ:1 edited into DLQ:2") || !strings.Contains(errOut, "check: would be parsed into 1 message(s)") {
		t.Fatalf("good edit: %d %s %s", code, out, errOut)
	}
	// The audit trail shows the reason as written, escaped once.
	if out, _, _ := d.cmd(t, "audit", "ls", "--action", "edit"); !strings.Contains(out, "UNT count — for BÜTTNER") {
		t.Fatalf("audit ls:\n%s", out)
	}
}

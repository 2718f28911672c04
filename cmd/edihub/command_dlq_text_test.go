package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/app"
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

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// hostileText is what a partner can put into a log field or message: CSI
// (ESC [ and the one-byte C1 form), an OSC retitle, a bidi override, DEL.
const hostileText = "A\x1b[2J\x1b]0;pwned\x07\u009b31m\u202eB\x7f"

func assertNoControls(t *testing.T, out string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\x7f"} {
		if strings.Contains(out, bad) {
			t.Fatalf("%q reaches the operator:\n%s", bad, out)
		}
	}
}

func TestPrettyLogEscapesMessagesAndFields(t *testing.T) {
	t.Setenv("NO_COLOR", "1") // colours are the writer's own ESC sequences
	var buf bytes.Buffer
	log, err := newLogger(&buf, "info", "pretty")
	if err != nil {
		t.Fatal(err)
	}
	log.Warn().Str("partner", hostileText).Strs("list", []string{hostileText}).Str("k"+hostileText, "v").
		Msg("alert " + hostileText + " — fired → sink")
	out := buf.String()
	assertNoControls(t, out)
	if !strings.Contains(out, "— fired → sink") {
		t.Fatalf("the log's own punctuation was escaped:\n%s", out)
	}
	if !strings.Contains(out, `A\x1B[2J`) {
		t.Fatalf("escaped message missing:\n%s", out)
	}
}

func TestJSONLogEscapesC1AndBidi(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	log.Warn().Str("partner", hostileText).Msg("m " + hostileText + " —")
	out := buf.String()
	assertNoControls(t, out)
	for _, want := range []string{`\u009b`, `\u202e`, `\u007f`, "—"} {
		if !strings.Contains(out, want) {
			t.Fatalf("JSON log lacks %s:\n%s", want, out)
		}
	}
	var ev map[string]any
	if err := json.Unmarshal(buf.Bytes(), &ev); err != nil || ev["partner"] != hostileText {
		t.Fatalf("JSON log not the same data: %v %q", err, ev["partner"])
	}
}

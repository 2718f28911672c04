package hub

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestEscapeTerminalNeverPassesControlBytes(t *testing.T) {
	in := "A\x1b[31mred\x1b]0;title\x07\r\n\t\\ \x9b2J \xe2\x80\xae é\x00\x7f"
	got := EscapeTerminal(in, false)
	want := `A\x1B[31mred\x1B]0;title\x07\r\n\t\\ \x9B2J \xE2\x80\xAE \xC3\xA9\x00\x7F`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for i := 0; i < len(got); i++ {
		if got[i] < 0x20 || got[i] >= 0x7f {
			t.Fatalf("raw byte %#x at %d", got[i], i)
		}
	}
	if kept := EscapeTerminal("a\nb\x1b", true); kept != "a\nb\\x1B" {
		t.Fatalf("keepNewlines: %q", kept)
	}
}

func TestPayloadLinesEDIFACTAndFallback(t *testing.T) {
	lines := PayloadLines([]byte(forensicInterchange("R1")), 0)
	if len(lines) != 6 || lines[0].Text != "UNA:+.? '" || lines[1].Tag != "UNB" || lines[1].Segment != 1 || lines[1].Offset != 9 || lines[5].Tag != "UNZ" {
		t.Fatalf("lines %+v", lines)
	}
	// Broken in the middle: segments up to the error, then escaped chunks.
	bad := "UNB+UNOC:3+S+R+261130:1200+R1'UNH+1+INVOIC:D:96A:UN'\x1b[2J" + strings.Repeat("x", 100)
	lines = PayloadLines([]byte(bad), 0)
	if lines[0].Tag != "UNB" || lines[1].Tag != "UNH" || !strings.HasPrefix(lines[2].Text, `\x1B[2J`) || lines[2].Segment != 0 {
		t.Fatalf("lines %+v", lines)
	}
	// Not EDI at all.
	lines = PayloadLines([]byte("\x00\x01binary junk"), 0)
	if len(lines) != 1 || lines[0].Text != `\x00\x01binary junk` {
		t.Fatalf("lines %+v", lines)
	}
	// Bounded.
	lines = PayloadLines([]byte(strings.Repeat("z", 10000)), 5)
	if len(lines) != 6 || !strings.Contains(lines[5].Text, "more bytes not shown") {
		t.Fatalf("lines %+v", lines[len(lines)-1])
	}
}

func TestForensicsConfigDefaultsAndYAML(t *testing.T) {
	var c ForensicsConfig
	if err := yaml.Unmarshal([]byte("memory_limit: 512MiB\ncpu_limit: 10s\nenabled: false\n"), &c); err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.MemoryLimit != 512<<20 || c.CPULimit != 10*time.Second || c.Timeout != 15*time.Second || c.IsEnabled() ||
		c.Concurrency != 1 || c.Bucket != "forensic" || c.TicketBucket != "tickets" {
		t.Fatalf("config %+v", c)
	}
	c.Concurrency, c.Timeout = 0, time.Second
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "concurrency") || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("validate: %v", err)
	}
	if _, err := ParseByteSize("12 parsecs"); err == nil {
		t.Fatal("bad size accepted")
	}
}

func TestChildInputRoundTrip(t *testing.T) {
	payload := []byte("UNA:+.? '\n\x00line\n")
	in, err := encodeChildInput(forensicPreamble{Stage: "parse", Headers: map[string][]string{"x-error-msg": {"a\nb"}}}, payload)
	if err != nil {
		t.Fatal(err)
	}
	p, got, err := decodeChildInput(in)
	if err != nil || string(got) != string(payload) || p.Stage != "parse" || p.Headers["x-error-msg"][0] != "a\nb" {
		t.Fatalf("%+v %q %v", p, got, err)
	}
}

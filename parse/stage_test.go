package parse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/wire"
)

// twoInvoices is an interchange of our own with two INVOIC messages.
const twoInvoices = "UNA:+.? '" +
	"UNB+UNOC:3+SENDER1:14+RECEIVER1:14+261130:1200+REF0001'" +
	"UNH+1+INVOIC:D:96A:UN'BGM+380+INV001+9'DTM+137:20261130:102'UNT+4+1'" +
	"UNH+2+INVOIC:D:96A:UN'BGM+380+INV002+9'MOA+77:12?+5'UNT+4+2'" +
	"UNZ+2+REF0001'"

// startParse runs a hub with the parse stage (and led, if any) on url (a
// new server when empty) until the test ends.
func startParse(t *testing.T, url string, led parse.Ledger) *hubtest.Env {
	t.Helper()
	cfg := hubtest.FastConfig()
	return hubtest.Run(t, &hubtest.Options{URL: url, Config: &cfg, Stages: []hub.Stage{parse.Stage(parse.Config{}, led)}})
}

func TestParseStageOneOutputPerMessage(t *testing.T) {
	env := startParse(t, "", nil)
	jetstreamtest.PublishIngest(t, env.JS, "ACME", twoInvoices, map[string][]string{wire.HdrCorrelationID: {"corr-42"}})
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "PARSED") == 2 })
	for i, m := range jetstreamtest.StreamMsgs(t, env.JS, "PARSED") {
		if m.Subject != "edi.parsed.ACME.INVOIC" {
			t.Fatalf("subject %s", m.Subject)
		}
		for k, v := range map[string]string{wire.HdrMessageID: "REF0001", wire.HdrCorrelationID: "corr-42", wire.HdrPartnerID: "ACME", wire.HdrMessageType: "INVOIC"} {
			if got := m.Header.Get(k); got != v {
				t.Errorf("message %d header %s = %q, want %q", i, k, got, v)
			}
		}
		var view map[string]any
		if err := json.Unmarshal(m.Data, &view); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		if !strings.Contains(string(m.Data), "INV00") {
			t.Fatalf("view lacks the document number: %s", m.Data)
		}
	}
}

// TestParsedCarriesProducerHeaders: a custom x-* header and a W3C
// traceparent sent with an interchange reach every output; what the hub
// owns, the server's Nats-* headers and the payload's signature do not,
// and a forged x-partner-id leaves the output's own untouched.
func TestParsedCarriesProducerHeaders(t *testing.T) {
	env := startParse(t, "", nil)
	jetstreamtest.PublishIngest(t, env.JS, "ACME", twoInvoices, map[string][]string{
		"x-order-batch": {"42"}, "traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		wire.HdrPartnerID: {"EVIL"}, wire.HdrSignature: {"ed25519:AAAA"}, wire.HdrSignatureKey: {"k1"},
		"x-bad-value": {"a\x1bb\n"}, wire.HdrCorrelationID: {"corr-7"},
	})
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "PARSED") == 2 })
	for i, m := range jetstreamtest.StreamMsgs(t, env.JS, "PARSED") {
		for k, want := range map[string]string{
			"x-order-batch": "42", "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
			wire.HdrPartnerID: "ACME", wire.HdrCorrelationID: "corr-7",
			wire.HdrSignature: "", wire.HdrSignatureKey: "", "x-bad-value": "",
		} {
			if got := m.Header.Get(k); got != want {
				t.Errorf("output %d: %s = %q, want %q", i, k, got, want)
			}
		}
		if vs := m.Header.Values(wire.HdrPartnerID); len(vs) != 1 {
			t.Errorf("output %d: x-partner-id %q, want the hub's one value", i, vs)
		}
	}
}

// Test 6: hostile payloads never crash the hub: each ends in the schema
// DLQ with a positioned, printable error, and the partition goes on.
func TestHostilePayloadsNeverCrash(t *testing.T) {
	big := bytes.Repeat([]byte("A"), 10<<20)
	hostile := map[string][]byte{
		"invalid-utf8": []byte("UNB+UNOW:4+S+R+261130:1200+R1'UNH+1+INVOIC:D:96A:UN'BGM+380+\xff\xfe\xfd'UNT+3+1'UNZ+1+R1'"),
		"nul-bytes":    []byte("UNB+UNOC:3+S+R+261130:1200+R1'UNH+1+INVOIC:D:96A:UN'BGM+380+\x00\x00\x00'UNT+3+1'UNZ+1+R1'"),
		"ten-mb":       append([]byte("UNB+UNOC:3+S+R+261130:1200+R1'UNH+1+INVOIC:D:96A:UN'FTX+AAA+++"), big...),
		"escapes":      []byte("\x1b[2J\x1b]0;pwned\x07UNB+UNOC:3+S+R'"),
		"empty":        {},
		"release-run":  append([]byte("UNA:+.? 'UNB+UNOC:3+S+R+261130:1200+R1'UNH+1+X:D:96A:UN'FTX+"), bytes.Repeat([]byte("?"), 1<<20)...),
	}
	env := startParse(t, "", nil)
	for name, data := range hostile {
		jetstreamtest.PublishIngest(t, env.JS, "ACME", string(data), map[string][]string{"x-case": {name}})
	}
	jetstreamtest.PublishIngest(t, env.JS, "ACME", twoInvoices, nil)
	// Generous: under -race on a loaded 2-core machine the 10 MB and 1 MB
	// cases alone took over 30 s once; the poll ends as soon as all are in.
	jetstreamtest.Eventually(t, 120*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == len(hostile) && jetstreamtest.CountMsgs(t, env.JS, "PARSED") == 2
	})
	for _, m := range jetstreamtest.StreamMsgs(t, env.JS, "DLQ") {
		name := m.Header.Get("x-case")
		if m.Subject != "edi.parse.dlq.schema" {
			t.Errorf("%s: %s", name, m.Subject)
		}
		if !bytes.Equal(m.Data, hostile[name]) {
			t.Errorf("%s: payload not byte for byte (%d vs %d bytes)", name, len(m.Data), len(hostile[name]))
		}
		msg := m.Header.Get(wire.HdrErrorMsg)
		if msg == "" {
			t.Errorf("%s: no x-error-msg", name)
		}
		for _, c := range []byte(msg) {
			if c < 0x20 || c > 0x7e {
				t.Errorf("%s: x-error-msg has byte %#x: %q", name, c, msg)
				break
			}
		}
		t.Logf("%-12s → %s", name, msg)
	}
}

// A dead letter names its interchange (x-message-id) whenever the UNB can
// be read, also when the envelope checks refused it.
func TestDeadLetterCarriesTheControlReference(t *testing.T) {
	env := startParse(t, "", nil)
	bad := "UNB+UNOC:3+S+R+261130:1200+REF77'UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'UNT+9+1'UNZ+1+REF77'" // wrong UNT count
	jetstreamtest.PublishIngest(t, env.JS, "ACME", bad, nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 1 })
	if got := jetstreamtest.StreamMsgs(t, env.JS, "DLQ")[0].Header.Get(wire.HdrMessageID); got != "REF77" {
		t.Fatalf("x-message-id %q, want REF77", got)
	}
}

// gauge reads a metric of reg (a gauge or a counter), -1 when missing.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) == 0 {
			continue
		}
		m := mf.GetMetric()[0]
		if g := m.GetGauge(); g != nil {
			return g.GetValue()
		}
		return m.GetCounter().GetValue()
	}
	return -1
}

// TestHubWaitsForTheMemoryBudget: with the parse stage's memory budget
// taken (by the test, standing for another partition's large
// interchange), an interchange large enough to count waits in its
// partition, parses nothing and is not dead-lettered; once the room is
// given back it is parsed. The metrics say the budget, the wait and what
// is in use.
func TestHubWaitsForTheMemoryBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("UNB+UNOA:3+SENDER:14+RECEIVER:14+261130:1200+BIG1'UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'")
	n := 0
	for ; b.Len() < 66<<10; n++ { // just over what the budget counts
		b.WriteString("LIN+1'")
	}
	fmt.Fprintf(&b, "UNT+%d+1'UNZ+1+BIG1'", n+3)
	data := b.String()

	budget := parse.NewBudget(parse.Estimate(len(data)))
	held, err := budget.Admit(context.Background(), len(data))
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	reg := prometheus.NewRegistry()
	cfg := hubtest.FastConfig()
	cfg.Attempts.Deadline = 10 * time.Second // the parse under -race on a loaded machine is no timeout
	env := hubtest.Run(t, &hubtest.Options{Config: &cfg, Stages: []hub.Stage{parse.New(parse.Config{}, &parse.Options{Budget: budget, Registry: reg})}})
	jetstreamtest.PublishIngest(t, env.JS, "ACME", data, nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return gauge(t, reg, "edihub_parse_memory_waits_total") >= 1 })
	if got := jetstreamtest.CountMsgs(t, env.JS, "PARSED"); got != 0 {
		t.Fatalf("%d outputs while the budget is taken", got)
	}
	if got, want := gauge(t, reg, "edihub_parse_memory_budget_bytes"), float64(budget.Limit()); got != want {
		t.Fatalf("budget metric %v, want %v", got, want)
	}
	held()
	jetstreamtest.Eventually(t, 30*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "PARSED") == 1 })
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return gauge(t, reg, "edihub_parse_memory_in_use_bytes") == 0 })
	if got := gauge(t, reg, "edihub_parse_memory_wait_seconds_total"); got <= 0 {
		t.Fatalf("wait seconds %v", got)
	}
	for _, s := range []string{"DLQ", "POISON"} {
		if got := jetstreamtest.CountMsgs(t, env.JS, s); got != 0 {
			t.Fatalf("%d messages in %s: the wait was charged to the interchange", got, s)
		}
	}
}

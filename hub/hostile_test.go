package hub

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
	"github.com/nats-io/nats.go"
)

// rawPublish speaks the NATS protocol itself, as an attacker would: the
// server stores header names nats.go refuses to encode.
func rawPublish(t *testing.T, serverURL, subject, headers string, payload []byte) {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if _, err := r.ReadString('\n'); err != nil { // INFO
		t.Fatal(err)
	}
	hdr := "NATS/1.0\r\n" + headers + "\r\n"
	fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"protocol\":1}\r\n")
	fmt.Fprintf(c, "HPUB %s %d %d\r\n%s%s\r\nPING\r\n", subject, len(hdr), len(hdr)+len(payload), hdr, payload)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "-ERR") {
			t.Fatalf("server refused: %s", line)
		}
		if strings.HasPrefix(line, "PONG") {
			return
		}
	}
}

// Producer headers a copy cannot carry (a control byte in a name, ~65 KB of
// headers) and letter-case variants of the hub's own names never hold the
// partition: the dead letter is stored, with the hub's headers winning, and
// the next message of the partition goes through. No attempt is counted as
// a process death.
func TestHostileHeadersNeverBlockThePartition(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	cfg := fastConfig()
	cfg.Partitions = 1 // everything in one partition: a stuck message would hold all
	env := startHub(t, url, "", cfg, []Stage{echoStage("parse", func(m *Message) error {
		if strings.HasPrefix(string(m.Data), "bad") {
			return PermanentError(wire.CauseSchema, fmt.Errorf("refused"))
		}
		return nil
	})}, nil)

	rawPublish(t, url, "edi.ingest.ACME", "X-Bad\x01Name: v\r\nX-Partner-Id: EVIL\r\nX-Original-Topic: edi.parsed.GLOBEX.INVOIC\r\nx-original-topic: edi.parsed.GLOBEX.INVOIC\r\n", []byte("bad 1"))
	big := strings.Repeat("h", 8000)
	var many strings.Builder
	for i := range 8 {
		fmt.Fprintf(&many, "X-Big-%d: %s\r\n", i, big)
	}
	rawPublish(t, url, "edi.ingest.ACME", many.String(), []byte("bad 2"))
	jetstreamtest.PublishIngest(t, env.js, "ACME", "good", nil)

	jetstreamtest.Eventually(t, 15*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 2 && jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1
	}, "the partition did not move past hostile headers")
	msgs := jetstreamtest.StreamMsgs(t, env.js, "DLQ")
	first := msgs[0].Header
	if got := first.Values(wire.HdrPartnerID); len(got) != 1 || got[0] != "ACME" {
		t.Fatalf("x-partner-id: %q", got)
	}
	if got := first.Values(wire.HdrOriginalTopic); len(got) != 1 || got[0] != "edi.ingest.ACME" {
		t.Fatalf("x-original-topic: %q (a producer must not choose it)", got)
	}
	for k := range first {
		if strings.EqualFold(k, wire.HdrPartnerID) && k != wire.HdrPartnerID || strings.EqualFold(k, wire.HdrOriginalTopic) && k != wire.HdrOriginalTopic {
			t.Fatalf("a producer's variant %q survived next to the hub's header", k)
		}
	}
	if first.Get("x-producer-x-partner-id") != "EVIL" || !strings.Contains(first.Get(wire.HdrHeadersDropped), `X-Bad\x01Name`) {
		t.Fatalf("producer headers not kept apart or dropped names not listed: %v", first)
	}
	second := msgs[1].Header
	if second.Get(wire.HdrHeadersDropped) == "" || second.Get(wire.HdrErrorCause) != wire.CauseSchema {
		t.Fatalf("oversized producer headers: %v", second)
	}
	if n := testCounter(t, env, "edihub_poison_detected_total"); n != 0 {
		t.Fatalf("%v messages quarantined: a failed copy was taken for a crash", n)
	}
}

// Whoever may publish on a retry subject cannot name the partner or make
// outputs under another partner's subject: a due retry is bound to its
// INGEST original (partner from its stored subject, same payload), and one
// that does not match is dead-lettered.
func TestForgedRetryIsDeadLetteredNotProcessed(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	env := startHub(t, url, "", fastConfig(), []Stage{echoStage("parse", nil)}, nil)
	seq := jetstreamtest.PublishIngest(t, env.js, "ACME", "acme's invoice", nil)
	jetstreamtest.Eventually(t, 5*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1 })

	forged := nats.Header{}
	forged.Set(wire.HdrOriginalStream, "INGEST")
	forged.Set(wire.HdrOriginalSeq, strconv.FormatUint(seq, 10))
	forged.Set(wire.HdrPartnerID, "GLOBEX")
	forged.Set(wire.HdrPartition, "0")
	if _, err := env.js.PublishMsg(context.Background(), &nats.Msg{Subject: wire.RetryDueSubject("parse", 5*time.Second), Header: forged, Data: []byte("forged invoice")}); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 1 }, "forged retry not dead-lettered")
	dl := jetstreamtest.StreamMsgs(t, env.js, "DLQ")[0]
	if dl.Subject != wire.DLQSubject("parse", wire.CauseUnknown) || dl.Header.Get(wire.HdrPartnerID) == "GLOBEX" {
		t.Fatalf("dead letter %s %v", dl.Subject, dl.Header)
	}
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "PARSED") {
		if strings.Contains(m.Subject, "GLOBEX") || string(m.Data) == "forged invoice" {
			t.Fatalf("forged retry produced %s: %q", m.Subject, m.Data)
		}
	}
}

// Nothing is stranded: what a raw client publishes to the literal subject
// edi.ingest.* (stored without a partition, read by no partition worker)
// is dead-lettered with a cause (a literal edi.ingest.>: see
// TestLiteralIngestAllIsDeadLettered).
func TestLiteralWildcardSubjectsAreDeadLettered(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	env := startHub(t, url, "", fastConfig(), []Stage{echoStage("parse", nil)}, nil)
	rawPublish(t, url, "edi.ingest.*", "", []byte("star"))
	jetstreamtest.PublishIngest(t, env.js, "ACME", "fine", nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 1 }, "literal subject stranded")
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "DLQ") {
		if m.Subject != wire.DLQSubject("parse", wire.CauseUnknown) || !strings.Contains(m.Header.Get(wire.HdrErrorMsg), "literal subject") {
			t.Fatalf("dead letter %s %v", m.Subject, m.Header)
		}
	}
	// ACME's runs on its partition's worker, beside the stray one's
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "PARSED") == 1 }, "ACME's interchange not parsed")
}

// The literal subject edi.ingest.> is stored by INGEST (its subject
// edi.ingest.* takes it, the partition transform cannot map it) and no
// consumer filter selects it apart from everything else. Published while
// no hub runs, it is found by the sweep at start; published while one
// runs, by the stray source or the sweep. Either way it ends in the first
// stage's DLQ with cause unknown and a reason, and leaves INGEST.
func TestLiteralIngestAllIsDeadLettered(t *testing.T) {
	url := jetstreamtest.StartServer(t, nil).URL
	first := startHub(t, url, "", fastConfig(), []Stage{echoStage("parse", nil)}, nil)
	first.stop()
	rawPublish(t, url, "edi.ingest.>", "", []byte("while down"))
	env := startHub(t, url, "", fastConfig(), []Stage{echoStage("parse", nil)}, nil)
	rawPublish(t, url, "edi.ingest.>", "", []byte("while up"))
	jetstreamtest.PublishIngest(t, env.js, "ACME", "fine", nil)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 2 }, "edi.ingest.> stranded")
	got := map[string]bool{}
	for _, m := range jetstreamtest.StreamMsgs(t, env.js, "DLQ") {
		if m.Subject != wire.DLQSubject("parse", wire.CauseUnknown) || !strings.Contains(m.Header.Get(wire.HdrErrorMsg), `"edi.ingest.>"`) {
			t.Fatalf("dead letter %s %v", m.Subject, m.Header)
		}
		got[string(m.Data)] = true
	}
	if !got["while down"] || !got["while up"] {
		t.Fatalf("dead letters %v", got)
	}
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		for _, m := range jetstreamtest.StreamMsgs(t, env.js, "INGEST") {
			if m.Subject == "edi.ingest.>" {
				return false
			}
		}
		return true
	}, "edi.ingest.> still in INGEST after it was dead-lettered")
	if n := jetstreamtest.CountMsgs(t, env.js, "PARSED"); n != 1 {
		t.Fatalf("PARSED %d", n)
	}
}

// Duplicates are counted, and sampled into the audit trail: one event per
// partner per minute, so a partner resending a batch does not bury what
// people did.
func TestDuplicateAuditIsSampled(t *testing.T) {
	s := audit.Sampler{Every: time.Minute}
	now := time.Now()
	if held, ok := s.Sample("ACME", now); !ok || held != 0 {
		t.Fatal("first duplicate not sampled")
	}
	for i := 1; i <= 5; i++ {
		if _, ok := s.Sample("ACME", now.Add(time.Duration(i)*time.Second)); ok {
			t.Fatalf("duplicate %d within the minute sampled", i)
		}
	}
	if _, ok := s.Sample("GLOBEX", now); !ok {
		t.Fatal("another partner's first duplicate not sampled")
	}
	if held, ok := s.Sample("ACME", now.Add(61*time.Second)); !ok || held != 5 {
		t.Fatalf("after the minute: %v %d, want the 5 held back counted", ok, held)
	}
}

// One problem is one group: errors that differ only in the offending byte
// (or its offset) share a fingerprint.
func TestFingerprintFoldsTheOffendingByte(t *testing.T) {
	a := fingerprint("error", "*edifact.GuardError", "schema: byte 'a' is outside the UNOA repertoire (uppercase) (offset 12, code 21)", nil)
	b := fingerprint("error", "*edifact.GuardError", "schema: byte 'z' is outside the UNOA repertoire (uppercase) (offset 40, code 21)", nil)
	c := fingerprint("error", "*edifact.GuardError", "schema: byte 0xE9 is outside the UNOA repertoire (uppercase) (offset 3, code 21)", nil)
	d := fingerprint("error", "*edifact.ParseError", "schema: UNT count 9 but message has 3 segments (code 29)", nil)
	if a != b || a != c || a == d {
		t.Fatalf("fingerprints %s %s %s %s", a, b, c, d)
	}
}

package bridge

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
)

// kcat is a client that is neither franz-go nor the bridge: what it sees
// is what a Spring or Connect shop sees. It writes a record with a trace
// context and a custom x-* header into an inbound topic, and reads the
// dead letters of two outbound routes (Spring and Connect header sets).
func TestKcatSeesSpringAndConnectHeaders(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not on PATH")
	}
	t.Parallel()
	h := startNATS(t, 0)
	_, brokers := startKafka(t, "partners.in", "dlt.spring", "dlt.connect")
	cfg := testConfig(brokers)
	cfg.Inbound = []InRoute{{Topic: "partners.in"}}
	cfg.Outbound = []OutRoute{
		{Name: "spring", Filter: "edi.parse.dlq.>", Topic: "dlt.spring", DLTHeaders: DLTSpring},
		{Name: "connect", Filter: "edi.parse.dlq.>", Topic: "dlt.connect", DLTHeaders: DLTConnect},
	}
	r := startBridge(t, h, cfg, nil)
	run := func(stdin string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, kcat, append([]string{"-b", brokers[0]}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("kcat %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}

	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	run("UNA:+.? 'UNB+UNOC:3+ACME+HUB'", "-P", "-t", "partners.in", "-k", "ACME",
		"-H", "traceparent="+tp, "-H", "x-shipment=SH-1", "-H", "x-partner-id=FORGED")
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return h.count(t, "INGEST") == 1 }, "kcat's record in INGEST")
	in := h.streamMsgs(t, "INGEST")[0]
	if in.Header.Get("traceparent") != tp || in.Header.Get("x-shipment") != "SH-1" || in.Header.Get("x-partner-id") != "" ||
		in.Header.Get("x-producer-x-partner-id") != "FORGED" || in.Header.Get("x-kafka-group") != "edihub-bridge-in-partners-in" {
		t.Fatalf("inbound headers: %v", in.Header)
	}

	// The hub's parse stage gives the record up: its dead letter keeps
	// the Kafka provenance.
	dl := nats.NewMsg("edi.parse.dlq.schema")
	dl.Data = in.Data
	for k, vs := range in.Header {
		if !strings.HasPrefix(k, "Nats-") && k != "x-bridge-copy" {
			dl.Header[k] = vs
		}
	}
	dl.Header.Set("x-original-topic", in.Subject)
	dl.Header.Set("x-error-class", "permanent")
	dl.Header.Set("x-error-msg", "segment UNH missing")
	dl.Header.Set("x-stage", "parse")
	dl.Header.Set("x-partner-id", "ACME") // the hub's, from the stored subject
	publish(t, h, dl)

	read := func(topic string) string {
		var out string
		jetstreamtest.Eventually(t, 15*time.Second, func() bool {
			out = run("", "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k|%p|%h\n")
			return strings.TrimSpace(out) != ""
		}, "kcat reads %s", topic)
		return out
	}
	spring := read("dlt.spring")
	for _, want := range []string{
		"ACME|", "kafka_dlt-original-topic=partners.in", "kafka_dlt-original-consumer-group=edihub-bridge-in-partners-in",
		"kafka_dlt-exception-fqcn=io.edihub.permanent.SchemaException", "kafka_dlt-exception-cause-fqcn=io.edihub.permanent.SchemaException",
		"kafka_dlt-exception-message=segment UNH missing", "kafka_dlt-exception-stacktrace=io.edihub.permanent.SchemaException: segment UNH missing",
		"kafka_dlt-original-timestamp-type=CreateTime", "traceparent=" + tp, "x-shipment=SH-1",
	} {
		if !strings.Contains(spring, want) {
			t.Errorf("Spring DLT record lacks %q:\n%s", want, spring)
		}
	}
	connect := read("dlt.connect")
	for _, want := range []string{
		"__connect.errors.topic=partners.in", "__connect.errors.partition=", "__connect.errors.offset=0",
		"__connect.errors.exception.class.name=io.edihub.permanent.SchemaException", "__connect.errors.exception.message=segment UNH missing",
		"__connect.errors.stage=PARSE", "traceparent=" + tp,
	} {
		if !strings.Contains(connect, want) {
			t.Errorf("Connect DLT record lacks %q:\n%s", want, connect)
		}
	}
	if strings.Contains(connect, "kafka_dlt-") || strings.Contains(spring, "__connect.") {
		t.Error("header sets mixed")
	}
	r.stop(t)
}

package bridge

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestConfigFromYAMLWithDefaults(t *testing.T) {
	src := `
bridge:
  brokers: [127.0.0.1:9092]
  backoff_max: 10s
  inbound:
    - topic: partners.in
    - topic: partners.hdr
      partner_from: header:x-partner-id
      group: custom
  outbound:
    - filter: edi.parsed.>
      topic: edi.parsed
    - filter: edi.*.dlq.>
`
	var doc struct {
		Bridge Config `yaml:"bridge"`
	}
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	cfg := &doc.Bridge
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Outbound[0].SpringDLT != nil || cfg.Inbound[0].Name != "" {
		t.Fatal("Validate changed the caller's config")
	}
	c := cfg.withDefaults()
	if c.BackoffMax != 10*time.Second || c.BackoffMin != 250*time.Millisecond || c.BatchSize != 256 {
		t.Fatalf("defaults: %+v", c)
	}
	in := c.Inbound[0]
	if in.Name != "in-partners-in" || in.Subject != "edi.ingest.{{partner}}" || in.PartnerFrom != "key" || in.Group != "edihub-bridge-in-partners-in" {
		t.Fatalf("inbound defaults: %+v", in)
	}
	if c.Inbound[1].Group != "custom" {
		t.Fatalf("group override lost: %+v", c.Inbound[1])
	}
	parsed, dlq := c.Outbound[0], c.Outbound[1]
	if parsed.Durable != "bridge-out-edi-parsed-all" || parsed.KeyToken != 3 || *parsed.SpringDLT || parsed.Topic != "edi.parsed" {
		t.Fatalf("parsed route defaults: %+v", parsed)
	}
	if dlq.Topic != "{{subject}}" || dlq.KeyToken != 0 || !*dlq.SpringDLT || dlq.Name != "out-edi-any-dlq-all" {
		t.Fatalf("dlq route defaults: %+v spring=%v", dlq, *dlq.SpringDLT)
	}
}

func TestConfigValidateNamesEveryProblem(t *testing.T) {
	cfg := &Config{
		Brokers:  []string{"nohostport"},
		Inbound:  []InRoute{{Topic: "bad topic!", PartnerFrom: "nowhere"}, {Topic: "t", Subject: "edi.ingest.fixed"}},
		Outbound: []OutRoute{{Filter: "edi..x", Topic: "a/b"}, {Filter: "edi.parsed.>", Name: "in-t"}},
	}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"want host:port", "not a Kafka topic name", "partner_from", "{{partner}}", "not a subject filter", "used twice"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if err := (&Config{Brokers: []string{"h:1"}}).Validate(); err == nil || !strings.Contains(err.Error(), "no routes") {
		t.Fatalf("empty config: %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	in, err := ParseInFlag("topic=partners.in,partner=header:x-partner-id,group=g1")
	if err != nil || in.Topic != "partners.in" || in.PartnerFrom != "header:x-partner-id" || in.Group != "g1" {
		t.Fatalf("%+v %v", in, err)
	}
	out, err := ParseOutFlag("filter=edi.parse.dlq.>,topic={{subject}},spring_dlt=false,key_token=4")
	if err != nil || out.Filter != "edi.parse.dlq.>" || out.Topic != "{{subject}}" || *out.SpringDLT || out.KeyToken != 4 {
		t.Fatalf("%+v %v", out, err)
	}
	for _, bad := range []string{"", "topic", "subject=x", "topic=t,colour=red"} {
		if _, err := ParseInFlag(bad); err == nil {
			t.Errorf("--in %q accepted", bad)
		}
	}
	for _, bad := range []string{"topic=x", "filter=a,spring_dlt=maybe", "filter=a,key_token=x"} {
		if _, err := ParseOutFlag(bad); err == nil {
			t.Errorf("--out %q accepted", bad)
		}
	}
}

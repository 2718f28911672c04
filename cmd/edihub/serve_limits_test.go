package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// serve against a server with the stock max_payload (1 MiB) and the
// default hub.edifact.max_size (10 MiB) refuses to start, saying which
// setting to change, instead of taking interchanges it can never ingest.
func TestServeRefusesLimitsTheServerCannotTake(t *testing.T) {
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{MaxPayload: 1 << 20})
	code, out := runServeCmd(t, "--nats-url", srv.URL, "--data", t.TempDir(), "--http", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(out, "hub.edifact.max_size is 10485760 bytes") || !strings.Contains(out, "raise max_payload") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// Every stream an interchange is stored in whole is checked, for the
// default size and each partner's.
func TestInterchangeNeeds(t *testing.T) {
	var cfg fileConfig
	cfg.Hub.SetDefaults()
	cfg.Hub.EDIFACT.Partners = map[string]edifact.PartnerConfig{"BIG": {MaxSize: 50 << 20}, "SAME": {}}
	needs := interchangeNeeds(cfg)
	var got []string
	for _, n := range needs {
		got = append(got, fmt.Sprintf("%s=%d@%s", n.Setting, n.Size, n.Stream))
	}
	want := "hub.edifact.max_size=10485760@INGEST hub.edifact.max_size=10485760@RETRY hub.edifact.max_size=10485760@DLQ " +
		"hub.edifact.max_size=10485760@PARKING hub.edifact.max_size=10485760@POISON " +
		"hub.edifact.partners.BIG.max_size=52428800@INGEST hub.edifact.partners.BIG.max_size=52428800@RETRY " +
		"hub.edifact.partners.BIG.max_size=52428800@DLQ hub.edifact.partners.BIG.max_size=52428800@PARKING " +
		"hub.edifact.partners.BIG.max_size=52428800@POISON"
	if strings.Join(got, " ") != want {
		t.Fatalf("needs:\n%s\nwant:\n%s", strings.Join(got, " "), want)
	}
}

package parse_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// lowercaseUNOA has lowercase letters under UNOA: refused strictly,
// accepted leniently.
const lowercaseUNOA = "UNB+UNOA:3+SENDER1:14+RECEIVER1:14+261130:1200+LC1'" +
	"UNH+1+INVOIC:D:96A:UN'BGM+380+inv001+9'UNT+3+1'UNZ+1+LC1'"

// Per-partner strictness: the profile's strict is the one place; the
// deprecated parse.partners.<id>.lenient still applies where the profile
// says nothing, and the profile wins where both are set.
func TestPartnerStrictness(t *testing.T) {
	yes, no := true, false
	reg, err := partner.New(partner.Config{Directory: "off", Profiles: []partner.Profile{
		{ID: "LAX", Strict: &no},    // lenient by its profile
		{ID: "TIGHT", Strict: &yes}, // strict by its profile, whatever parse says
		{ID: "OLD"},                 // nothing in the profile: parse.partners decides
		{ID: "PLAIN"},               // nothing anywhere: the default, strict
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := parse.Config{Partners: map[string]edifact.PartnerConfig{"OLD": {Lenient: &yes}, "TIGHT": {Lenient: &yes}}}
	for id, accepted := range map[string]bool{"LAX": true, "TIGHT": false, "OLD": true, "PLAIN": false} {
		d := parse.Decide(context.Background(), &parse.Input{Partner: id, Stream: "INGEST", Seq: 1, Header: nats.Header{},
			Data: []byte(lowercaseUNOA)}, parse.With{Config: cfg, Agreements: reg})
		if (d.Err == nil) != accepted {
			t.Errorf("%s: %v, want accepted %v", id, d.Err, accepted)
		}
		if !accepted && d.Cause() != wire.CauseSchema {
			t.Errorf("%s: cause %q, want schema", id, d.Cause())
		}
	}
	if got := parse.Deprecated(cfg); len(got) != 2 {
		t.Errorf("deprecation lines %q, want one per partner lenient", got)
	}
}

package forensics

import (
	"context"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/sandbox"
)

// lowercaseUNOA has lowercase letters under UNOA: refused strictly,
// accepted leniently.
const lowercaseUNOA = "UNB+UNOA:3+SENDER1:14+RECEIVER1:14+261130:1200+LC1'" +
	"UNH+1+INVOIC:D:96A:UN'BGM+380+inv001+9'UNT+3+1'UNZ+1+LC1'"

// The analyzer's parse stage decides with the partner's parse options the
// hub resolved (the preamble's), not with the child's empty config: the
// same decision as the hub's stage.
func TestAnalyzerDecidesWithTheHubsOptions(t *testing.T) {
	run := func(lenient bool) error {
		in, err := encodeChildInput(preamble{Stage: "parse", Stream: "INGEST", Seq: 1, Partner: "ACME",
			EDIFACT: &edifact.Options{Lenient: lenient}}, []byte(lowercaseUNOA))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Analyzer(parse.Config{})(context.Background(), in, func(sandbox.Progress) {})
		return err
	}
	if err := run(true); err != nil {
		t.Fatalf("lenient, as the hub resolved for the partner: %v", err)
	}
	if err := run(false); err == nil {
		t.Fatal("strict: accepted")
	}
}

// A UBL payload is guarded by the UBL guard and decided by the stage as
// UBL, not refused by the EDIFACT guard: a refusal names the XML reason.
func TestAnalyzerUBL(t *testing.T) {
	run := func(payload string) (sandbox.Result, error) {
		in, err := encodeChildInput(preamble{Stage: "parse", Stream: "INGEST", Seq: 1, Partner: "ACME", EDIFACT: &edifact.Options{}}, []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		return Analyzer(parse.Config{})(context.Background(), in, func(sandbox.Progress) {})
	}
	_, err := run(`<?xml version="1.0"?><!DOCTYPE Invoice [<!ENTITY a "a">]><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`)
	if err == nil || !strings.Contains(err.Error(), "DOCTYPE") && !strings.Contains(err.Error(), "declaration") {
		t.Fatalf("DOCTYPE: %v", err)
	}
	// well-formed UBL that fails validation: the stage's verdict (business or schema), not "no UNB"
	_, err = run(`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`)
	if err == nil || strings.Contains(err.Error(), "UNB") {
		t.Fatalf("empty Invoice: %v", err)
	}
	t.Logf("empty Invoice: %v", err)
}

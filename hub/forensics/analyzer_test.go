package forensics

import (
	"context"
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

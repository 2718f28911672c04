package partner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/edifact/edifacttest"
)

// A rule over every segment of a 10 MiB INVOIC is refused as business,
// naming the rule, within a second of its time limit: cel-go's cost
// tracker alone let it run for minutes (into the stage's deadline, then
// POISON as a timeout).
func TestRuleTimeIsBounded(t *testing.T) {
	data := edifacttest.BigInvoice(155_800)
	if len(data) < 10<<20-16<<10 {
		t.Fatalf("the interchange is %d bytes, want about 10 MiB", len(data))
	}
	off := false
	p := Profile{ID: "ACME", Directory: "off", BuiltinRules: &off,
		Rules: []Rule{{Name: "every-segment", Expr: `msg.segments.all(s, s.tag != "")`}}}
	const limit = time.Second
	set, err := builtin()
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Profiles: []Profile{p}, RuleTimeLimit: limit}, &Options{Now: fixedNow, Directories: set})
	if err != nil {
		t.Fatal(err)
	}
	var took time.Duration
	_, err = edifact.Walk(data, edifact.Config{}.Options("ACME"), func(em *edifact.Message) error {
		view, err := edifact.MessageJSON(em)
		if err != nil {
			return err
		}
		start := time.Now()
		err = r.Message(context.Background(), "ACME", em, view)
		took = time.Since(start)
		return err
	})
	var rej *Rejection
	if !errors.As(err, &rej) || rej.Rule != "every-segment" || rej.DLQCause != "business" || !strings.Contains(err.Error(), "rule_time_limit") {
		t.Fatalf("want a business refusal naming the rule and its time limit, got %v", err)
	}
	if took > limit+time.Second {
		t.Fatalf("refused after %s, want within a second of its %s limit", took, limit)
	}
	t.Logf("refused after %s: %v", took, err)
}

// The stage's own end (its deadline, a shutdown) is the stage's error,
// never a refusal of the partner's message.
func TestRuleStageEndIsNotARefusal(t *testing.T) {
	p := Profile{ID: "ACME", Directory: "off", Rules: []Rule{{Name: "buyer", Expr: `msg.segments.exists(s, s.tag == "NAD")`}}}
	r := newRegistry(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := edifact.Walk(edifacttest.BigInvoice(10), edifact.Config{}.Options("ACME"), func(em *edifact.Message) error {
		view, err := edifact.MessageJSON(em)
		if err != nil {
			return err
		}
		return r.Message(ctx, "ACME", em, view)
	})
	var rej *Rejection
	if errors.As(err, &rej) || !errors.Is(err, context.Canceled) {
		t.Fatalf("want the context's error, got %v", err)
	}
}

func TestRuleTimeLimitValidated(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, time.Minute} {
		if err := (Config{RuleTimeLimit: d}).Validate(); err == nil || !strings.Contains(err.Error(), "rule_time_limit") {
			t.Errorf("%s: want refused, got %v", d, err)
		}
	}
	if err := (Config{RuleTimeLimit: 2 * time.Second}).Validate(); err != nil {
		t.Errorf("2s: %v", err)
	}
}

package forensics

import (
	"context"
	"github.com/edihub/edihub/edifact/edifacttest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A report is keyed by the origin the poison copy names; anyone who may
// publish on edi.poison.> can name an origin that was already analysed. The
// first report, payload and ticket must stay as they were.
func TestPoisonClaimingAnAnalysedOriginDoesNotOverwriteIt(t *testing.T) {
	env := startForensics(t, jetstreamtest.StartServer(t, nil).URL, fastForensicsConfig(), nil)
	provisionPoison(t, env.js)
	ctx := context.Background()
	origin := nats.Header{wire.HdrOriginalStream: {"INGEST"}, wire.HdrOriginalSeq: {"4242"}}
	first := publishPoison(t, env.js, "parse", "ACME", edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "FIRST1"), origin)
	r1 := waitReport(t, env.store, first, 60*time.Second)
	if r1.Key != "INGEST/4242" {
		t.Fatalf("first report key %q", r1.Key)
	}
	if _, err := env.store.TransitionTicket(ctx, r1.ID, "ack", "alice", "mine", nil); err != nil {
		t.Fatal(err)
	}

	second := publishPoison(t, env.js, "parse", "EVIL", "forged payload", origin)
	r2 := waitReport(t, env.store, second, 60*time.Second)
	if r2.Key == r1.Key || r2.Ticket == r1.Ticket || r2.PoisonSeq != second || !strings.Contains(r2.Collision, "POISON:") {
		t.Fatalf("second report %s (ticket %s, collision %q) must not take the first one's place", r2.Key, r2.Ticket, r2.Collision)
	}
	again, err := env.store.Report(ctx, "INGEST/4242")
	if err != nil || again.PoisonSeq != first || again.Partner != "ACME" {
		t.Fatalf("the first report was overwritten: %+v (%v)", again, err)
	}
	if p, err := env.store.Payload(ctx, again); err != nil || string(p) != edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "FIRST1") {
		t.Fatalf("the first payload was overwritten: %q (%v)", p, err)
	}
	if tk, err := env.store.Ticket(ctx, r1.Ticket); err != nil || tk.State != TicketAcked || tk.PoisonID != r1.ID {
		t.Fatalf("the first ticket changed: %+v (%v)", tk, err)
	}
	list, err := env.store.List(ctx)
	if err != nil || len(list) != 2 || list[0].Key != r1.Key || list[1].Key != r2.Key || list[1].Outcome == "pending" {
		t.Fatalf("list %+v (%v)", list, err)
	}
}

package parse_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// accept: message with every message refused: the interchange is refused
// whole (no output, no partial dead letter), and the CONTRL names every
// message's error (UCI 0083 4, a UCM 4 with its 0085 per message), the
// same acknowledgement `partner check` (Registry.Try) builds: one test
// drives both.
func TestDecideAllRefusedNamesEveryError(t *testing.T) {
	both := strings.Replace(edifacttest.Invoice("R6"), "UNZ+1+R6'", "UNH+2+ORDERS:D:96A:UN'BGM+220+PO1+9'UNT+3+2'UNZ+2+R6'", 1)
	reg, err := partner.New(partner.Config{Directory: "off", Profiles: []partner.Profile{
		{ID: "MIX", Messages: []string{"DESADV"}, Accept: partner.AcceptMessage, Ack: partner.AckConfig{CONTRL: partner.AckAll}},
	}}, &partner.Options{Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }}) // one minute for both
	if err != nil {
		t.Fatal(err)
	}
	d := parse.Decide(context.Background(), &parse.Input{Partner: "MIX", Stream: "INGEST", Seq: 1, Header: nats.Header{},
		Data: []byte(both)}, parse.With{Agreements: reg})
	if d.Cause() != wire.CausePartnerRejected || len(d.Outputs) != 0 || len(d.Refused) != 0 || d.DeadLetter != nil || len(d.Acks) != 1 {
		t.Fatalf("cause %q, %d outputs, %d refused, dead letter %v, %d acks (%v)", d.Cause(), len(d.Outputs), len(d.Refused), d.DeadLetter != nil, len(d.Acks), d.Err)
	}
	ack := d.Acks[0]
	if ack.Header.Get(wire.HdrAckResult) != "rejected" ||
		!strings.Contains(string(ack.Data), "+4'UCM+1+INVOIC:D:96A:UN+4+17+UNH+3:1'UCM+2+ORDERS:D:96A:UN+4+17+UNH+3:1'") {
		t.Fatalf("CONTRL (%s) names not every error: %s", ack.Header.Get(wire.HdrAckResult), ack.Data)
	}
	try := reg.Try(context.Background(), "MIX", nil, []byte(both), &edifact.Options{})
	if len(try.Acks) != 1 || !bytes.Equal(try.Acks[0].Data, ack.Data) {
		t.Fatalf("partner check and the parse stage disagree:\ncheck: %v\nstage: %s", try.Acks, ack.Data)
	}
}

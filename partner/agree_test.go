package partner_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// TestCheckAgreesWithOutbound drives `edihub partner check` (Registry.Try,
// what the command calls) and a real hub with the same profile over the
// same interchanges, and asserts that the acknowledgements the check says
// it would send are the ones the hub stores on OUTBOUND: same types, same
// results, the same segments (our own control references, which derive
// from the INGEST sequence, set aside).
func TestCheckAgreesWithOutbound(t *testing.T) {
	ok := file(t, "invoic_ok.edi")
	x12 := file(t, "x12_850.edi")
	inputs := []string{
		ok,
		file(t, "invoic_bad_count.edi"),
		file(t, "invoic_bad_total.edi"), // business: APERAK and a positive CONTRL
		strings.ReplaceAll(ok, "INV0042", "INV004200000000"), // UNB 0020 an..14
		x12,
		file(t, "x12_850_bad_count.edi"),
		strings.Replace(x12, "*0*T*>~", "*0*X*>~", 1), // ISA15
		// for MIXED (accept: message): a good message and one not agreed
		strings.Replace(ok, "UNZ+1+INV0042'", "UNH+2+ORDERS:D:96A:UN'BGM+220+PO1+9'UNT+3+2'UNZ+2+INV0042'", 1),
		strings.Replace(x12, "GE*1*101~", "ST*810*0002~BIG*20240315*INV-1~TDS*1000~SE*4*0002~GE*2*101~", 1),
	}
	const firstMixed = 7 // inputs from here on are MIXED's
	profile := partner.Profile{ID: "ACME", Senders: []string{"4012345000009:14", "BUYERID:ZZ"},
		Recipients: []string{"4098765000002", "SELLERID"}, Messages: []string{"INVOIC D:96A", "850 005010"},
		Ack: partner.AckConfig{CONTRL: partner.AckAll, APERAK: true, X12: "999", X12All: true, TA1: partner.AckErrors}}
	mixed := profile
	mixed.ID, mixed.Accept = "MIXED", partner.AcceptMessage
	now := func() time.Time { return time.Date(2026, 11, 30, 14, 5, 0, 0, time.UTC) }

	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	reg, err := partner.New(partner.Config{Profiles: []partner.Profile{profile, mixed}}, &partner.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Provision(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	cfg := hubtest.FastConfig()
	cfg.SetDefaults()
	var pc parse.Config
	pc.SetDefaults()
	keys, err := audit.NewKeyring([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	led, err := ledger.OpenKV(t.Context(), j, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := hubtest.Run(t, &hubtest.Options{URL: srv.URL, Config: &cfg, Keyring: keys,
		Stages: []hub.Stage{parse.New(pc, &parse.Options{Agreements: reg, JS: j, Ledger: led, Keys: keys})}})

	var want [][]string // per input: type/result/normalized body of each ack the check names
	total := 0
	var refused []string // what the check says MIXED's inputs refuse alone
	for i, in := range inputs {
		id := "ACME"
		if i >= firstMixed {
			id = "MIXED"
		}
		d := reg.Try(t.Context(), id, nil, []byte(in), pc.Options(id))
		if i >= firstMixed {
			if !d.Accepted || len(d.Refused) != 1 {
				t.Fatalf("input %d: the check says %+v, want accepted with one message refused", i+1, d)
			}
			refused = append(refused, d.Refused[0])
		}
		var acks []string
		for _, a := range d.Acks {
			acks = append(acks, ackKey(a.Header.Get(wire.HdrMessageType), a.Header.Get(wire.HdrAckResult), a.Header.Get(wire.HdrMessageID), a.Data))
		}
		want = append(want, acks)
		total += len(acks)
		jetstreamtest.PublishIngest(t, j, id, in, nil)
	}
	if total == 0 {
		t.Fatal("the check names no acknowledgement")
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, j, wire.DefaultOutboundStream) >= total
	}, "every acknowledgement on OUTBOUND")
	got := make([][]string, len(inputs))
	for _, m := range jetstreamtest.StreamMsgs(t, j, wire.DefaultOutboundStream) {
		_, s, _ := strings.Cut(m.Header.Get(wire.HdrAckOrigin), ":")
		seq, err := strconv.Atoi(s)
		if err != nil || seq < 1 || seq > len(inputs) {
			t.Fatalf("ack with origin %q", m.Header.Get(wire.HdrAckOrigin))
		}
		got[seq-1] = append(got[seq-1], ackKey(m.Header.Get(wire.HdrMessageType), m.Header.Get(wire.HdrAckResult),
			m.Header.Get(wire.HdrMessageID), m.Data))
	}
	for i := range inputs {
		if strings.Join(got[i], "\n") != strings.Join(want[i], "\n") {
			t.Errorf("input %d: OUTBOUND holds\n%s\nthe check says\n%s", i+1, strings.Join(got[i], "\n"), strings.Join(want[i], "\n"))
		}
	}
	// the hub published MIXED's accepted messages and dead-lettered each
	// interchange once, naming the message refused as the check did
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		return jetstreamtest.CountMsgs(t, j, wire.DefaultDLQStream) >= len(inputs)-firstMixed
	}, "MIXED's dead letters")
	mixedState := func() (named []string, views map[string]int) {
		for _, m := range jetstreamtest.StreamMsgs(t, j, wire.DefaultDLQStream) {
			if m.Header.Get(wire.HdrPartnerID) == "MIXED" {
				named = append(named, m.Header.Get(wire.HdrRefusedMessages))
				if m.Subject != wire.DLQSubject("parse", wire.CausePartnerRejected) {
					t.Errorf("MIXED's dead letter on %s", m.Subject)
				}
				if err := audit.VerifyCopy(keys, m.Header, m.Data); err != nil {
					t.Errorf("MIXED's dead letter is not marked as the hub's (dlq replay would refuse it): %v", err)
				}
			}
		}
		views = map[string]int{}
		for _, m := range jetstreamtest.StreamMsgs(t, j, wire.DefaultParsedStream) {
			if m.Header.Get(wire.HdrPartnerID) == "MIXED" {
				views[m.Header.Get(wire.HdrMessageType)]++
			}
		}
		return named, views
	}
	named, views := mixedState()
	if strings.Join(named, ",") != strings.Join(refused, ",") {
		t.Errorf("DLQ names %v refused, the check %v", named, refused)
	}
	if len(views) != 2 || views["INVOIC"] != 1 || views["850"] != 1 {
		t.Errorf("MIXED's views on PARSED: %v, want one INVOIC and one 850", views)
	}
	// the ledger recorded the partially accepted interchange once: sent
	// again, it is a duplicate, and neither its views nor its dead letter
	// are stored twice
	jetstreamtest.PublishIngest(t, j, "MIXED", inputs[firstMixed], nil)
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		return jetstreamtest.MetricSum(t, env.Registry, "edihub_pipeline_duplicate_interchanges_total") == 1
	}, "the resent interchange skipped as a duplicate")
	if again, viewsAgain := mixedState(); len(again) != len(named) || viewsAgain["INVOIC"] != 1 {
		t.Errorf("after the resend: dead letters %v, views %v", again, viewsAgain)
	}
	t.Logf("%d acknowledgements of %d interchanges agree", total, len(inputs))
}

// ackKey is an acknowledgement with its own control reference (ISA13,
// GS06, UNB 0020, BGM 1004) replaced by REF.
func ackKey(typ, result, ref string, body []byte) string {
	s := strings.ReplaceAll(string(body), ref, "REF")
	if short := strings.TrimLeft(ref, "0"); short != "" && short != ref {
		s = strings.ReplaceAll(s, "*"+short+"*X*", "*REF*X*")
		s = strings.ReplaceAll(s, "GE*1*"+short+"~", "GE*1*REF~")
	}
	return typ + "/" + result + " " + s
}

package partner

import (
	"context"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// mixedEDIFACT is invoic_ok.edi with a second message, an ORDERS the
// profile does not agree, so accept: message refuses it alone.
func mixedEDIFACT(t *testing.T) []byte {
	s := string(read(t, "invoic_ok.edi"))
	s = strings.Replace(s, "UNZ+1+INV0042'", "UNH+2+ORDERS:D:96A:UN'BGM+220+PO1+9'UNT+3+2'UNZ+2+INV0042'", 1)
	return []byte(s)
}

// mixedGroup is mixedEDIFACT with its messages inside a UNG group.
func mixedGroup(t *testing.T) []byte {
	s := string(mixedEDIFACT(t))
	s = strings.Replace(s, "UNH+1+", "UNG+INVOIC+4012345000009:14+4098765000002:14+240315:0930+G1+UN+D:96A'UNH+1+", 1)
	s = strings.Replace(s, "UNZ+2+INV0042'", "UNE+2+G1'UNZ+1+INV0042'", 1)
	return []byte(s)
}

// mixedX12 is x12_850.edi with a second set, an 810 the profile does not
// agree.
func mixedX12(t *testing.T) []byte {
	s := string(read(t, "x12_850.edi"))
	s = strings.Replace(s, "GE*1*101~", "ST*810*0002~BIG*20240315*INV-1~TDS*1000~SE*4*0002~GE*2*101~", 1)
	return []byte(s)
}

// TestAcceptMessage decides interchanges of a good and a refused message
// under accept: message as `partner check` does, and compares the
// acknowledgements with the golden files (-update rewrites them):
//   - CONTRL: UCI 0083 7 ("this level acknowledged, next lower level
//     acknowledged if not explicitly rejected", code list 0083 of the
//     CONTRL message, ISO 9735 service code lists), UCM 7 for the INVOIC,
//     UCM 4 with 0085 17 (no agreement) on UNH S009 0065 (0098 3
//     counting the tag as 1, 0104 1), as contrl-type-not-agreed, for the
//     ORDERS;
//   - 999 (005010X231A1): AK2/IK5 A for the 850, AK2/IK5 R 1 (transaction
//     set not supported) for the 810, AK9 P 2 2 1 (AK901 P: partially
//     accepted, at least one transaction set was rejected; AK902 the sets
//     included, AK903 received, AK904 accepted);
//   - with accept: interchange the same input is refused whole.
func TestAcceptMessage(t *testing.T) {
	for _, c := range []struct {
		name    string
		data    []byte
		x12     bool
		ack997  bool
		want    []string
		refused string
	}{
		{name: "contrl-accept-message", data: mixedEDIFACT(t), refused: "2",
			want: []string{"UCI+INV0042+4012345000009:14+4098765000002:14+7'", "UCM+1+INVOIC:D:96A:UN+7'", "UCM+2+ORDERS:D:96A:UN+4+17+UNH+3:1'"}},
		// inside a group (SG3): UCF 7 for the group, its messages' UCM under it
		{name: "contrl-accept-message-group", data: mixedGroup(t), refused: "2",
			want: []string{"UCI+INV0042+4012345000009:14+4098765000002:14+7'UCF+G1+4012345000009:14+4098765000002:14+7'UCM+1+INVOIC:D:96A:UN+7'UCM+2+ORDERS:D:96A:UN+4+17+UNH+3:1'"}},
		{name: "x12-999-accept-message", data: mixedX12(t), x12: true, refused: "0002",
			want: []string{"AK2*850*0001~IK5*A~", "AK2*810*0002~IK5*R*1~", "AK9*P*2*2*1~"}},
		// 997 (005010X230): AK5 per set, AK9 P
		{name: "x12-997-accept-message", data: mixedX12(t), x12: true, ack997: true, refused: "0002",
			want: []string{"AK2*850*0001~AK5*A~", "AK2*810*0002~AK5*R*1~", "AK9*P*2*2*1~"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := acmeProfile()
			p.Messages = []string{"INVOIC D:96A", "850 005010"}
			if c.x12 {
				x12Partner(&p)
			}
			if c.ack997 {
				p.Ack.X12 = Type997
			}
			p.Accept = AcceptMessage
			r, err := New(Config{Directory: "off", Profiles: []Profile{p}}, &Options{Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			d := r.Try(context.Background(), "ACME", nil, c.data, &edifact.Options{})
			if !d.Accepted || strings.Join(d.Refused, ",") != c.refused || d.Messages != 2 {
				t.Fatalf("decision %+v, want accepted with %s refused", d, c.refused)
			}
			all := strictAcks(t, strictValidator(t), d.Acks, AckPartial)
			matchesGolden(t, c.name, all, c.want)

			p.Accept = AcceptInterchange
			r, err = New(Config{Directory: "off", Profiles: []Profile{p}}, &Options{Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			if d := r.Try(context.Background(), "ACME", nil, c.data, &edifact.Options{}); d.Accepted || len(d.Refused) != 0 {
				t.Errorf("accept: interchange: %+v, want the interchange refused", d)
			}
		})
	}
}

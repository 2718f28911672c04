package partner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
		want    []string
		refused string
	}{
		{name: "contrl-accept-message", data: mixedEDIFACT(t), refused: "2",
			want: []string{"UCI+INV0042+4012345000009:14+4098765000002:14+7'", "UCM+1+INVOIC:D:96A:UN+7'", "UCM+2+ORDERS:D:96A:UN+4+17+UNH+3:1'"}},
		{name: "x12-999-accept-message", data: mixedX12(t), x12: true, refused: "0002",
			want: []string{"AK2*850*0001~IK5*A~", "AK2*810*0002~IK5*R*1~", "AK9*P*2*2*1~"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := acmeProfile()
			p.Messages = []string{"INVOIC D:96A", "850 005010"}
			if c.x12 {
				x12Partner(&p)
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
			var all bytes.Buffer
			for _, a := range d.Acks {
				if _, err := edifact.Parse(a.Data, &edifact.Options{}); err != nil {
					t.Fatalf("ack does not parse: %v\n%s", err, a.Data)
				}
				all.Write(a.Data)
				all.WriteByte('\n')
			}
			for _, w := range c.want {
				if !bytes.Contains(all.Bytes(), []byte(w)) {
					t.Errorf("acknowledgements lack %s:\n%s", w, all.Bytes())
				}
			}
			golden := filepath.Join("testdata", "golden", c.name+".edi")
			if *update {
				if err := os.WriteFile(golden, all.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(want, all.Bytes()) {
				t.Fatalf("differs from %s:\n got: %s\nwant: %s", golden, all.Bytes(), want)
			}

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

package partner

import (
	"context"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/wire"
)

// TestAcceptMessageAllRefused: under accept: message with every message
// refused, the interchange is refused (as with accept: interchange), and
// its acknowledgement names every message's error, not only the first
// (golden files, -update rewrites them):
//   - CONTRL: UCI 0083 4 ("this level and all lower levels rejected",
//     code list 0083 of the CONTRL message), then a UCM 4 for each
//     message with its 0085 (17, no agreement, on UNH S009 0065: 0098 3,
//     0104 1), in the order of the interchange; inside a group (SG3) UCF
//     0083 4 for the group, its messages' UCM under it;
//   - 999 (005010X231A1): AK2/IK5 R 1 (transaction set not supported) for
//     both sets, AK9 R 2 2 0 (AK901 R: rejected; AK902 the sets included,
//     AK903 received, AK904 accepted).
func TestAcceptMessageAllRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		x12  bool
		want []string
	}{
		{name: "contrl-accept-message-all-refused", data: mixedEDIFACT(t),
			want: []string{"UCI+INV0042+4012345000009:14+4098765000002:14+4'UCM+1+INVOIC:D:96A:UN+4+17+UNH+3:1'UCM+2+ORDERS:D:96A:UN+4+17+UNH+3:1'"}},
		{name: "contrl-accept-message-all-refused-group", data: mixedGroup(t),
			want: []string{"UCI+INV0042+4012345000009:14+4098765000002:14+4'UCF+G1+4012345000009:14+4098765000002:14+4'UCM+1+INVOIC:D:96A:UN+4+17+UNH+3:1'UCM+2+ORDERS:D:96A:UN+4+17+UNH+3:1'"}},
		{name: "x12-999-accept-message-all-refused", data: mixedX12(t), x12: true,
			want: []string{"AK2*850*0001~IK5*R*1~", "AK2*810*0002~IK5*R*1~", "AK9*R*2*2*0~"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := acmeProfile()
			p.Messages = []string{"DESADV D:96A", "856 005010"} // neither message of the input
			if c.x12 {
				x12Partner(&p)
			}
			p.Accept = AcceptMessage
			r, err := New(Config{Directory: "off", Profiles: []Profile{p}}, &Options{Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			d := r.Try(context.Background(), "ACME", nil, c.data, &edifact.Options{})
			if d.Accepted || d.Messages != 2 || d.Cause != wire.CausePartnerRejected {
				t.Fatalf("decision %+v, want refused (partner-rejected)", d)
			}
			all := strictAcks(t, strictValidator(t), d.Acks, "rejected")
			matchesGolden(t, c.name, all, c.want)
			if strings.Count(string(all), "+17+") < 2 && !c.x12 {
				t.Fatalf("not every error named:\n%s", all)
			}
		})
	}
}

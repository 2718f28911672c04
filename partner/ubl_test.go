package partner

import (
	"strings"
	"testing"
)

// A profile's ubl: section and ack.mlr are validated with the profile.
func TestUBLConfigValidate(t *testing.T) {
	for _, c := range []struct {
		p    Profile
		want string // "" valid
	}{
		{Profile{ID: "A", UBL: UBLConfig{Strictness: "lenient", Profile: "peppol", Senders: []string{"0088:7300010000001"}, Endpoint: "0192:123"}, Ack: AckConfig{MLR: AckAll}}, ""},
		{Profile{ID: "A"}, ""},
		{Profile{ID: "A", UBL: UBLConfig{Strictness: "loose"}}, "strictness"},
		{Profile{ID: "A", UBL: UBLConfig{Profile: "xrechnung"}}, "profile"},
		{Profile{ID: "A", UBL: UBLConfig{Senders: []string{"7300010000001"}}}, "SCHEME:ID"},
		{Profile{ID: "A", UBL: UBLConfig{Endpoint: ":1"}}, "SCHEME:ID"},
		{Profile{ID: "A", Ack: AckConfig{MLR: "yes"}}, "ack.mlr"},
	} {
		err := Config{Profiles: []Profile{c.p}}.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.p.UBL, err, c.want)
		}
	}
	p := Profile{ID: "A"}
	if err := p.compile(Config{}.ruleLimits()); err != nil || p.UBL.Strictness != "strict" || p.UBL.Profile != "en16931" || p.Ack.MLR != AckNone {
		t.Errorf("defaults: %v %+v %q", err, p.UBL, p.Ack.MLR)
	}
}

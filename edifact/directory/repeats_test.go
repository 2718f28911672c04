package directory

import "testing"

// TestRepeatFactors: a syntax 4 COM with C076 repeated is valid up to the
// repeat factor D.01B's segment directory gives (EDSD COM: "C076
// COMMUNICATION CONTACT M 3", repeatFactors names where it was read);
// a fourth occurrence is code 35 on S011 0136 4; an allowed occurrence is
// checked like the first (a 3155 of four characters, an..3: code 39 on
// occurrence 2); D.03B, whose text was not found, allows one occurrence.
func TestRepeatFactors(t *testing.T) {
	v, _ := NewValidator(builtin(t), &Options{Strictness: Lenient})
	msg := func(version, com string) string {
		return "UNA:+.?*'UNB+UNOC:4+S+R+20200101:1200+1'UNH+1+ORDERS:D:" + version + ":UN'BGM+220+PO1+9'DTM+137:20200101:102'" +
			"NAD+BY+123::9'CTA+IC+:JOHN'" + com + "'UNS+S'UNT+8+1'UNZ+1+1'"
	}
	type want struct{ code, rep int }
	for _, c := range []struct {
		name, version, com string
		want               []want
	}{
		{"three occurrences (D01B)", "01B", "COM+0123:TE*J?@X.ORG:EM*0456:FX", nil},
		{"four occurrences (D01B)", "01B", "COM+0123:TE*J?@X.ORG:EM*0456:FX*0789:TE", []want{{CodeTooManyRepetitions, 4}}},
		{"bad value in occurrence 2 (D01B)", "01B", "COM+0123:TE*0456:TELE", []want{{CodeTooLong, 2}}},
		{"two occurrences (D03B: no factor known)", "03B", "COM+0123:TE*0456:FX", []want{{CodeTooManyRepetitions, 2}}},
	} {
		r := v.Validate(parseOne(t, msg(c.version, c.com)))
		var got []want
		for _, f := range r.Findings {
			if f.Severity == SeverityError {
				got = append(got, want{f.Code, f.Repetition})
				if f.Segment != 6 || f.Element != 1 {
					t.Errorf("%s: finding at segment %d element %d, want COM (6) element 1", c.name, f.Segment, f.Element)
				}
			}
		}
		if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
			t.Errorf("%s: errors %+v (findings %+v), want %+v", c.name, got, r.Findings, c.want)
		}
	}
}

package directory

import (
	"strings"
	"testing"
)

// TestRepeatFactors: a syntax 4 COM with C076 repeated is valid up to the
// repeat factor the directory's segment text gives (D.01B and D.03B EDSD
// COM: "C076 COMMUNICATION CONTACT M 3", repeatFactors names where each
// was read); a fourth occurrence is code 35 on S011 0136 4, at COM (segment
// 6) element 1, and the text names the directory and its factor; an
// allowed occurrence is checked like the first (a 3155 of four characters,
// an..3: code 39 on occurrence 2). D.96A, for which no factor is known,
// allows one occurrence and the refusal says that no factor is known.
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
		text               string // in the first error's text
	}{
		{"three occurrences (D01B)", "01B", "COM+0123:TE*J?@X.ORG:EM*0456:FX", nil, ""},
		{"four occurrences (D01B)", "01B", "COM+0123:TE*J?@X.ORG:EM*0456:FX*0789:TE", []want{{CodeTooManyRepetitions, 4}},
			"occurs 4 times; directory D01B allows 3 (repeat factor of COM element 1)"},
		{"bad value in occurrence 2 (D01B)", "01B", "COM+0123:TE*0456:TELE", []want{{CodeTooLong, 2}}, "3155"},
		{"two occurrences (D03B)", "03B", "COM+0123:TE*0456:FX", nil, ""},
		{"three occurrences (D03B)", "03B", "COM+0123:TE*J?@X.ORG:EM*0456:FX", nil, ""},
		{"four occurrences (D03B)", "03B", "COM+0123:TE*J?@X.ORG:EM*0456:FX*0789:TE", []want{{CodeTooManyRepetitions, 4}},
			"data element C076 occurs 4 times; directory D03B allows 3 (repeat factor of COM element 1)"},
		{"two occurrences (D96A: no factor known)", "96A", "COM+0123:TE*0456:FX", []want{{CodeTooManyRepetitions, 2}},
			"directory D96A as shipped carries no repeat factor for COM element 1, so one occurrence is allowed"},
	} {
		r := v.Validate(parseOne(t, msg(c.version, c.com)))
		if !r.Validated {
			t.Fatalf("%s: not validated (findings %+v)", c.name, r.Findings)
		}
		var got []want
		var first string
		for _, f := range r.Findings {
			if f.Severity == SeverityError {
				if first == "" {
					first = f.Msg
				}
				got = append(got, want{f.Code, f.Repetition})
				if f.Segment != 6 || f.Tag != "COM" || f.Element != 1 {
					t.Errorf("%s: finding at segment %d %s element %d, want COM (6) element 1", c.name, f.Segment, f.Tag, f.Element)
				}
			}
		}
		if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
			t.Errorf("%s: errors %+v (findings %+v), want %+v", c.name, got, r.Findings, c.want)
		}
		if !strings.Contains(first, c.text) {
			t.Errorf("%s: first error %q, want it to contain %q", c.name, first, c.text)
		}
	}
}

// TestRepeatFactorATT: D.03B ATT C956 (element 3) has repeat factor 5
// (repeatFactors names its source): PAXLST's ATT+2++M*M*M*M*M (the shared
// corpus's smooks PAXLST) is valid, a sixth occurrence is code 35 on S011
// 0136 6 at ATT (segment 7) element 3.
func TestRepeatFactorATT(t *testing.T) {
	v, _ := NewValidator(builtin(t), &Options{Strictness: Strict})
	msg := func(att string) string {
		return "UNB+UNOA:4+S+R+20041013:1901+16'UNH+P16+PAXLST:D:03B:UN'BGM+10+LOCKKH04103101+4'RFF+RF:03'" +
			"TDT+11++++LOCK:172'DTM+132:20041230:102'NAD+VW+0000041153:109++AOMAD:CHRIS::::1'" + att +
			"'UNT+8+P16'UNZ+1+16'"
	}
	ok := v.Validate(parseOne(t, msg("ATT+2++M*M*M*M*M")))
	if !ok.Validated || ok.Err() != nil {
		t.Fatalf("five C956: validated %v, err %v (findings %+v)", ok.Validated, ok.Err(), ok.Findings)
	}
	r := v.Validate(parseOne(t, msg("ATT+2++M*M*M*M*M*M")))
	var errs []Finding
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			errs = append(errs, f)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("six C956: errors %+v, want one", errs)
	}
	f := errs[0]
	if f.Code != CodeTooManyRepetitions || f.Segment != 7 || f.Tag != "ATT" || f.Element != 3 || f.Repetition != 6 ||
		!strings.Contains(f.Msg, "directory D03B allows 5 (repeat factor of ATT element 3)") {
		t.Errorf("six C956: %+v, want code 35 at ATT (7) element 3 occurrence 6, naming D03B's factor 5", f)
	}
}

// TestRepeatFactorTable: each factor repeatFactors lists names a position
// of a shipped directory's segment that holds the data element the source
// names there, so a factor can't slide onto a neighbour.
func TestRepeatFactorTable(t *testing.T) {
	set := builtin(t)
	n := 0
	for dir, segs := range repeatFactors {
		d := set.Directory(dir)
		if d == nil {
			t.Errorf("%s: not a shipped directory", dir)
			continue
		}
		for tag, pos := range segs {
			def := d.Segments[tag]
			if def == nil {
				t.Errorf("%s %s: no such segment", dir, tag)
				continue
			}
			for e, r := range pos {
				n++
				if e < 1 || e > len(def.Elements) || def.Elements[e-1].ID != r.ID || r.N < 2 {
					t.Errorf("%s %s element %d: factor %+v does not fit the segment %+v", dir, tag, e, r, def.Elements)
				}
				if got, known := repeatFactor(dir, tag, e); got != r.N || !known {
					t.Errorf("%s %s element %d: repeatFactor %d %v, want %d true", dir, tag, e, got, known, r.N)
				}
			}
		}
	}
	if n != 22 {
		t.Errorf("%d factors, want the 22 read (D03B 8, D01B 8, D99B 6)", n)
	}
	if got, known := repeatFactor("D03B", "CUX", 1); got != 1 || known {
		t.Errorf("D03B CUX 1: %d %v, want 1 false", got, known)
	}
}

package directory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// testDir is a small synthetic directory with every rule the validator
// knows: TESTMS D 99Z = UNH AAA SG1(BBB CCC*3)*2 DDD UNT.
func testDir() *Directory {
	return &Directory{
		Name: "D99Z",
		Messages: map[string]*MessageDef{"TESTMS": {Type: "TESTMS", Version: "D", Release: "99Z", Agency: "UN", Body: []Node{
			{Tag: "UNH", Required: true, MaxRepeat: 1},
			{Tag: "AAA", Required: true, MaxRepeat: 1},
			{Group: "SG1", Required: true, MaxRepeat: 2, Children: []Node{
				{Tag: "BBB", Required: true, MaxRepeat: 1},
				{Tag: "CCC", MaxRepeat: 3},
			}},
			{Tag: "DDD", Required: true, MaxRepeat: 1},
			{Tag: "UNT", Required: true, MaxRepeat: 1},
		}}},
		Segments: map[string]*SegmentDef{
			"AAA": {Tag: "AAA", Elements: []ElementDef{
				{ID: "9001", Simple: ComponentDef{ID: "9001", Type: TypeA, MaxLen: 3}},
				{ID: "9002", Simple: ComponentDef{ID: "9002", Type: TypeN, MinLen: 4, MaxLen: 4}},
				{ID: "C901", Required: true, Components: []ComponentDef{
					{ID: "9003", Required: true, Type: TypeAN, MaxLen: 2},
					{ID: "9004", Type: TypeN, MaxLen: 3},
				}},
			}},
			"BBB": {Tag: "BBB", Elements: []ElementDef{{ID: "9005", Required: true, Simple: ComponentDef{ID: "9005", Required: true, Type: TypeAN, MaxLen: 3}}}},
			"CCC": {Tag: "CCC", Elements: []ElementDef{{ID: "9006", Simple: ComponentDef{ID: "9006", Type: TypeAN, MaxLen: 3}}}},
			"DDD": {Tag: "DDD"},
		},
		Codes: map[string][]string{"9005": {"X", "Y"}},
	}
}

// want is one expected finding: code, position, element, component.
type want struct {
	code, seg, elem, comp int
	sev                   Severity
}

func TestErrorClasses(t *testing.T) {
	set := builtin(t).With(testDir())
	ok := []string{"AAA+ABC+1234+X1:12", "BBB+X", "CCC+Q", "DDD"}
	cases := []struct {
		name  string
		segs  []string
		opts  *Options
		want  []want
		valid bool // no finding at all
	}{
		{name: "valid", segs: ok, valid: true},
		{name: "valid without optional parts", segs: []string{"AAA+++X1", "BBB+Y", "DDD"}, valid: true},
		{name: "missing mandatory segment", segs: []string{"BBB+X", "DDD"}, want: []want{{CodeMissing, 2, 0, 0, SeverityError}}},
		{name: "missing mandatory group", segs: []string{"AAA+++X1", "DDD"}, want: []want{{CodeMissing, 3, 0, 0, SeverityError}}},
		{name: "missing trailer-side segment", segs: []string{"AAA+++X1", "BBB+X"}, want: []want{{CodeMissing, 4, 0, 0, SeverityError}}},
		{name: "out of order", segs: []string{"AAA+++X1", "BBB+X", "DDD", "CCC"}, want: []want{{CodeNotSupportedPosition, 5, 0, 0, SeverityError}}},
		{name: "unknown segment", segs: []string{"AAA+++X1", "ZZZ+1", "BBB+X", "DDD"}, want: []want{{CodeNotSupportedPosition, 3, 0, 0, SeverityError}}},
		{name: "segment repeated too often", segs: []string{"AAA+++X1", "AAA+++X1", "BBB+X", "DDD"}, want: []want{{CodeTooManyRepetitions, 3, 0, 0, SeverityError}}},
		{name: "segment in group repeated too often", segs: []string{"AAA+++X1", "BBB+X", "CCC", "CCC", "CCC", "CCC", "DDD"}, want: []want{{CodeTooManyRepetitions, 7, 0, 0, SeverityError}}},
		{name: "group repeated too often", segs: []string{"AAA+++X1", "BBB+X", "BBB+X", "BBB+X", "DDD"}, want: []want{{CodeTooManyGroupRepetitions, 5, 0, 0, SeverityError}}},
		{name: "too many elements", segs: []string{"AAA+++X1+EXTRA", "BBB+X", "DDD"}, want: []want{{CodeTooManyConstituents, 2, 4, 0, SeverityError}}},
		{name: "trailing empty elements strict", segs: []string{"AAA+++X1++", "BBB+X", "DDD"}, want: []want{{CodeTrailingSeparator, 2, 4, 0, SeverityError}}},
		{name: "trailing empty elements lenient", opts: &Options{Strictness: Lenient}, segs: []string{"AAA+++X1++", "BBB+X", "DDD"}, want: []want{{CodeTrailingSeparator, 2, 4, 0, SeverityWarning}}},
		{name: "too many components", segs: []string{"AAA+++X1:2:3", "BBB+X", "DDD"}, want: []want{{CodeTooManyConstituents, 2, 3, 3, SeverityError}}},
		{name: "components in a simple element", segs: []string{"AAA+AB:C++X1", "BBB+X", "DDD"}, want: []want{{CodeTooManyConstituents, 2, 1, 2, SeverityError}}},
		{name: "missing mandatory element", segs: []string{"AAA+ABC", "BBB+X", "DDD"}, want: []want{{CodeMissing, 2, 3, 0, SeverityError}}},
		{name: "empty mandatory element", segs: []string{"AAA+++", "BBB+X", "DDD"}, want: []want{{CodeMissing, 2, 3, 0, SeverityError}}},
		{name: "missing mandatory component", segs: []string{"AAA+++:12", "BBB+X", "DDD"}, want: []want{{CodeMissing, 2, 3, 1, SeverityError}}},
		{name: "digit in alphabetic", segs: []string{"AAA+A1+1234+X1", "BBB+X", "DDD"}, want: []want{{CodeInvalidCharType, 2, 1, 0, SeverityError}}},
		{name: "letter in numeric", segs: []string{"AAA++12A4+X1", "BBB+X", "DDD"}, want: []want{{CodeInvalidCharType, 2, 2, 0, SeverityError}}},
		{name: "missing digit before decimal mark", segs: []string{"AAA+++X1:.5", "BBB+X", "DDD"}, want: []want{{CodeMissingDigitBeforeMark, 2, 3, 2, SeverityError}}},
		{name: "two decimal marks", segs: []string{"AAA+++X1:1.2.3", "BBB+X", "DDD"}, want: []want{{CodeInvalidDecimalNotation, 2, 3, 2, SeverityError}}},
		{name: "decimal mark last", segs: []string{"AAA+++X1:5.", "BBB+X", "DDD"}, want: []want{{CodeInvalidDecimalNotation, 2, 3, 2, SeverityError}}},
		{name: "sign and mark do not count", segs: []string{"AAA+++X1:-12.3", "BBB+X", "DDD"}, valid: true},
		{name: "comma decimal mark", segs: []string{"AAA+++X1:1,5", "BBB+X", "DDD"}, valid: true},
		{name: "lone minus", segs: []string{"AAA+++X1:-", "BBB+X", "DDD"}, want: []want{{CodeInvalidCharType, 2, 3, 2, SeverityError}}},
		{name: "numeric too long", segs: []string{"AAA+++X1:1234", "BBB+X", "DDD"}, want: []want{{CodeTooLong, 2, 3, 2, SeverityError}}},
		{name: "fixed length too short", segs: []string{"AAA++123+X1", "BBB+X", "DDD"}, want: []want{{CodeTooShort, 2, 2, 0, SeverityError}}},
		{name: "fixed length too long", segs: []string{"AAA++12345+X1", "BBB+X", "DDD"}, want: []want{{CodeTooLong, 2, 2, 0, SeverityError}}},
		{name: "alphanumeric too long", segs: []string{"AAA+++XYZ", "BBB+X", "DDD"}, want: []want{{CodeTooLong, 2, 3, 1, SeverityError}}},
		{name: "code not in list strict", segs: []string{"AAA+++X1", "BBB+Q", "DDD"}, want: []want{{CodeInvalidValue, 3, 1, 0, SeverityError}}},
		{name: "code not in list lenient", opts: &Options{Strictness: Lenient}, segs: []string{"AAA+++X1", "BBB+Q", "DDD"}, want: []want{{CodeInvalidValue, 3, 1, 0, SeverityWarning}}},
		{name: "off", opts: &Options{Strictness: Off}, segs: []string{"ZZZ"}, valid: true},
		{name: "one stray segment, one finding", segs: []string{"AAA+++X1", "BBB+X", "QQQ", "CCC", "DDD"}, want: []want{{CodeNotSupportedPosition, 4, 0, 0, SeverityError}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts == nil {
				opts = &Options{Strictness: Strict}
			}
			v, err := NewValidator(set, opts)
			if err != nil {
				t.Fatal(err)
			}
			r := v.Validate(parseOne(t, envelope("TESTMS:D:99Z:UN", tc.segs...)))
			if tc.valid {
				if len(r.Findings) != 0 {
					t.Fatalf("want no finding, got %v", r.Findings)
				}
				return
			}
			if len(r.Findings) != len(tc.want) {
				t.Fatalf("want %d findings, got %d: %v", len(tc.want), len(r.Findings), r.Findings)
			}
			for i, w := range tc.want {
				f := r.Findings[i]
				if f.Code != w.code || f.Segment != w.seg || f.Element != w.elem || f.Component != w.comp || f.Severity != w.sev {
					t.Errorf("finding %d: got %s %s, want code %d segment %d element %d component %d %s", i, f.Severity, f, w.code, w.seg, w.elem, w.comp, w.sev)
				}
				if f.Tag == "" || f.Number == 0 || f.Offset == 0 || !printableASCII(f.Msg) {
					t.Errorf("finding %d lacks its position or has unprintable text: %+v", i, f)
				}
			}
			err = r.Err()
			if hasErrors := r.Errors() > 0; hasErrors != (err != nil) {
				t.Fatalf("Err() = %v with %d errors", err, r.Errors())
			}
			if err != nil {
				e := err.(*Error)
				if e.Cause() != CauseSchema || !strings.Contains(e.Error(), "(code ") || !printableASCII(e.Error()) {
					t.Errorf("error text: %q", e.Error())
				}
			}
		})
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return s != ""
}

func TestMissingSegmentNamesIt(t *testing.T) {
	v, _ := NewValidator(builtin(t).With(testDir()), nil)
	r := v.Validate(parseOne(t, envelope("TESTMS:D:99Z:UN", "AAA+++X1", "DDD")))
	if len(r.Findings) != 1 || r.Findings[0].Missing != "SG1/BBB" || r.Findings[0].Tag != "DDD" {
		t.Fatalf("missing group: %+v", r.Findings)
	}
	r = v.Validate(parseOne(t, envelope("TESTMS:D:99Z:UN", "BBB+X", "DDD")))
	if len(r.Findings) != 1 || r.Findings[0].Missing != "AAA" {
		t.Fatalf("missing segment: %+v", r.Findings)
	}
}

func TestUnknownMessage(t *testing.T) {
	set := builtin(t)
	m := parseOne(t, envelope("ORDERS:D:09Z:UN", "BGM+220+1+9"))
	for _, tc := range []struct {
		opts *Options
		sev  Severity
	}{
		{nil, SeverityWarning},
		{&Options{Strictness: Strict}, SeverityError},
		{&Options{Strictness: Lenient, RejectUnknown: true}, SeverityError},
	} {
		v, _ := NewValidator(set, tc.opts)
		r := v.Validate(m)
		if r.Validated || len(r.Findings) != 1 || r.Findings[0].Code != CodeValueNotSupported || r.Findings[0].Severity != tc.sev || r.Findings[0].Element != 2 {
			t.Errorf("%+v: %+v", tc.opts, r)
		}
	}
}

func TestRepeatedElementSyntax4(t *testing.T) {
	v, _ := NewValidator(builtin(t), &Options{Strictness: Strict})
	in := "UNA:+.?*'UNB+UNOC:4+S+R+20200101:1200+1'UNH+1+ORDERS:D:96A:UN'BGM+220+PO1+9'DTM+137:20200101:102*2:20200102:102'NAD+BY+123::9'UNS+S'UNT+6+1'UNZ+1+1'"
	r := v.Validate(parseOne(t, in))
	if len(r.Findings) != 1 || r.Findings[0].Code != CodeTooManyRepetitions || r.Findings[0].Element != 1 || r.Findings[0].Repetition != 2 || r.Findings[0].Segment != 3 {
		t.Fatalf("%+v", r.Findings)
	}
}

func TestFindingsAreCapped(t *testing.T) {
	v, _ := NewValidator(builtin(t), &Options{Strictness: Strict, MaxFindings: 10})
	segs := []string{"BGM+220+PO1+9", "DTM+137:20200101:102"}
	for range 500 {
		segs = append(segs, "XYZ+1")
	}
	r := v.Validate(parseOne(t, envelope("ORDERS:D:96A:UN", segs...)))
	if len(r.Findings) != 10 || !r.Truncated {
		t.Fatalf("%d findings, truncated %v", len(r.Findings), r.Truncated)
	}
}

func TestNotEdifactNotValidated(t *testing.T) {
	v, _ := NewValidator(builtin(t), nil)
	x12 := "ISA*00*          *00*          *ZZ*SENDER         *ZZ*RECEIVER       *200101*1200*U*00401*000000001*0*P*>~GS*PO*SENDER*RECEIVER*20200101*1200*1*X*004010~ST*850*0001~BEG*00*SA*1**20200101~SE*3*0001~GE*1*1~IEA*1*000000001~"
	r := v.Validate(parseOne(t, x12))
	if r.Validated || len(r.Findings) != 0 {
		t.Fatalf("%+v", r)
	}
}

func TestOptionsValidate(t *testing.T) {
	if _, err := NewValidator(builtin(t), &Options{Strictness: "loose"}); err == nil {
		t.Fatal("unknown strictness accepted")
	}
	if _, err := NewValidator(nil, nil); err == nil {
		t.Fatal("nil set accepted")
	}
	for _, s := range []string{"", "strict", "lenient", "off"} {
		if _, err := ParseStrictness(s); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrentUse validates the same messages from several goroutines
// (run with -race): a Validator and its Set hold no per-message state.
func TestConcurrentUse(t *testing.T) {
	v, _ := NewValidator(builtin(t).With(testDir()), &Options{Strictness: Strict})
	good := parseOne(t, envelope("TESTMS:D:99Z:UN", "AAA+ABC+1234+X1:12", "BBB+X", "DDD"))
	bad := parseOne(t, envelope("TESTMS:D:99Z:UN", "AAA+A1", "ZZZ", "DDD"))
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				if r := v.Validate(good); len(r.Findings) != 0 {
					done <- r.Err()
					return
				}
				if r := v.Validate(bad); r.Errors() != 4 {
					done <- fmt.Errorf("bad message: %v", r.Findings)
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestLargeMessage: 5 000 line items in one ORDERS message validate clean
// and 5 000 stray segments stop at the findings cap.
func TestLargeMessage(t *testing.T) {
	v, _ := NewValidator(builtin(t), &Options{Strictness: Strict})
	segs := []string{"BGM+220+PO1+9", "DTM+137:20200101:102"}
	for i := 1; i <= 5000; i++ {
		segs = append(segs, fmt.Sprintf("LIN+%d++4000862141404:EN", i), "QTY+21:5")
	}
	segs = append(segs, "UNS+S")
	if r := v.Validate(parseOne(t, envelope("ORDERS:D:96A:UN", segs...))); len(r.Findings) != 0 {
		t.Fatalf("%d findings: %v", len(r.Findings), r.Findings[0])
	}
	stray := []string{"BGM+220+PO1+9", "DTM+137:20200101:102"}
	for range 5000 {
		stray = append(stray, "ZZZ+1")
	}
	r := v.Validate(parseOne(t, envelope("ORDERS:D:96A:UN", stray...)))
	if len(r.Findings) != 100 || !r.Truncated {
		t.Fatalf("%d findings, truncated %v", len(r.Findings), r.Truncated)
	}
}

// TestNestedGroups walks a real INVOIC D96A through nested groups: header
// parties with references (SG2/SG3), lines with amounts, prices and taxes
// (SG25/SG26/SG28/SG33), the summary after UNS (SG48, SG50).
func TestNestedGroups(t *testing.T) {
	v, _ := NewValidator(builtin(t), &Options{Strictness: Strict})
	ok := []string{
		"BGM+380+INV1+9", "DTM+137:20200101:102",
		"NAD+BY+5412345000013::9", "RFF+VA:BE0123456789", "DTM+171:20200101:102",
		"NAD+SU+4012345000016::9", "CUX+2:EUR:4",
		"LIN+1++4000862141404:EN", "QTY+47:10", "MOA+203:100", "PRI+AAA:10", "TAX+7+VAT+++:::21+S", "MOA+124:21",
		"LIN+2++4000862141411:EN", "QTY+47:1", "MOA+203:5", "PRI+AAA:5",
		"UNS+S", "CNT+2:2", "MOA+77:126", "MOA+79:105", "TAX+7+VAT+++:::21+S", "MOA+124:21",
	}
	if r := v.Validate(parseOne(t, envelope("INVOIC:D:96A:UN", ok...))); len(r.Findings) != 0 {
		t.Fatalf("valid INVOIC: %v", r.Findings)
	}
	// A line after the summary section is out of order, and only it.
	bad := append(append([]string{}, ok...), "LIN+3++4000862141428:EN")
	r := v.Validate(parseOne(t, envelope("INVOIC:D:96A:UN", bad...)))
	if len(r.Findings) != 1 || r.Findings[0].Code != CodeNotSupportedPosition || r.Findings[0].Segment != len(bad)+1 {
		t.Fatalf("LIN after UNS: %v", r.Findings)
	}
	// Without the summary MOA the mandatory group SG48 is missing at UNT.
	noSum := append(append([]string{}, ok[:18]...), "CNT+2:2")
	r = v.Validate(parseOne(t, envelope("INVOIC:D:96A:UN", noSum...)))
	if len(r.Findings) != 1 || r.Findings[0].Code != CodeMissing || r.Findings[0].Missing != "SG48/MOA" || r.Findings[0].Tag != "UNT" {
		t.Fatalf("summary MOA missing: %v", r.Findings)
	}
}

// TestHandBuiltMessages: messages not made by the parser (no interchange,
// no segments, odd repeats) are handled without a panic.
func TestHandBuiltMessages(t *testing.T) {
	v, _ := NewValidator(builtin(t).With(testDir()), &Options{Strictness: Strict})
	for _, m := range []*edifact.Message{
		{},
		{Type: "TESTMS", Version: "D", Release: "99Z", Segments: []edifact.Segment{{Tag: "BGM"}}},
		{Type: "TESTMS", Version: "D", Release: "99Z", Segments: []edifact.Segment{{Tag: "UNH"}, {Tag: "AAA", Elements: [][]string{{}, nil, {"X1"}},
			Repeats: []edifact.Repeat{{Element: 0}, {Element: 99}, {Element: 3, Occurrences: [][]string{{"Y"}}}}}, {Tag: "UNT"}}},
	} {
		r := v.Validate(m)
		for _, f := range r.Findings {
			if !printableASCII(f.Msg) {
				t.Errorf("%+v", f)
			}
		}
		if hasUNH := len(m.Segments) > 0 && m.Segments[0].Tag == "UNH"; r.Validated != hasUNH || hasUNH && r.Errors() == 0 {
			t.Errorf("%+v: validated %v, %d errors", m, r.Validated, r.Errors())
		}
	}
}

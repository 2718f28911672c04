package edifact

import (
	"errors"
	"strings"
	"testing"
)

// TestX12EnvelopeFields checks the ISA and GS element attributes of X12.5
// (Interchange Control Structures): each fault is refused at its element
// with a 0085 code; the valid variants (GS04 YYMMDD before 004010, ISA11
// "U" or a separator) pass.
func TestX12EnvelopeFields(t *testing.T) {
	const ok = "ISA*00*          *00*          *ZZ*SENDER         *ZZ*RECEIVER       *240315*0930*^*00501*000000101*0*P*>~" +
		"GS*PO*SENDER*RECEIVER*20240315*0930*101*X*005010~ST*850*0001~BEG*00*SA*1**20240315~SE*3*0001~GE*1*101~IEA*1*000000101~"
	cases := []struct {
		name, from, to string
		tag            string
		elem, code     int // 0: valid
	}{
		{"valid", "", "", "", 0, 0},
		{"ISA13 not numeric", "000000101", "00000010A", "ISA", 13, CodeInvalidValue},
		{"ISA15 X", "*0*P*>", "*0*X*>", "ISA", 15, CodeInvalidValue},
		{"ISA09 month 13", "*240315*0930*", "*261399*0930*", "ISA", 9, CodeInvalidValue},
		{"ISA10 2460", "*240315*0930*", "*240315*2460*", "ISA", 10, CodeInvalidValue},
		{"ISA11 caret under 00401", "*^*00501*", "*^*00401*", "ISA", 11, CodeInvalidValue},
		{"ISA11 U under 00401", "*^*00501*", "*U*00401*", "", 0, 0},
		{"ISA14 2", "*000000101*0*", "*000000101*2*", "ISA", 14, CodeInvalidValue},
		{"ISA06 short", "*SENDER         *", "*SENDER        *", "", 0, 0}, // not fixed width: the Reader refuses it first
		{"GS04 YYMMDD", "*20240315*0930*101", "*240315*0930*101", "", 0, 0},
		{"GS04 not a date", "*20240315*0930*101", "*20241315*0930*101", "GS", 4, CodeInvalidValue},
		{"GS06 letters", "*0930*101*X", "*0930*10A*X", "GS", 6, CodeInvalidValue},
		{"GS07 Q", "*101*X*005010", "*101*Q*005010", "GS", 7, CodeInvalidValue},
		{"GS02 of 16", "GS*PO*SENDER*", "GS*PO*SENDER0123456789*", "GS", 2, CodeTooLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := ok
			if c.from != "" {
				data = strings.Replace(ok, c.from, c.to, 1)
				if c.from == "000000101" {
					data = strings.ReplaceAll(ok, c.from, c.to)
				}
			}
			_, err := Parse([]byte(data), nil)
			if c.name == "ISA06 short" {
				if err == nil {
					t.Fatal("a short ISA06 was accepted")
				}
				return
			}
			if c.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Tag != c.tag || pe.Element != c.elem || pe.Code != c.code {
				t.Fatalf("got %v, want %s element %d code %d", err, c.tag, c.elem, c.code)
			}
		})
	}
}

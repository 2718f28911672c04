package directory

import (
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// TestValidateInterchange checks the service segments of an interchange
// against the Service V3/V4 directories: each case names the element, the
// 0085 code and the clause. A fault's Element counts after the tag (a
// CONTRL's S011 0098 is Element+1).
func TestValidateInterchange(t *testing.T) {
	const body = "UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'DTM+137:20240315:102'UNS+S'MOA+77:1'UNT+6+1'"
	unb := "UNB+UNOA:3+SENDER:14+RECIPIENT:14+240315:0930+REF1'"
	set := builtin(t)
	lenient, _ := NewValidator(set, nil)
	strict, _ := NewValidator(set, &Options{Strictness: Strict})
	cases := []struct {
		name, unb, group string
		strictOnly       bool // the finding is an error in strict mode only
		code, elem, comp int  // 0: no error
		tag              string
	}{
		{name: "valid v3", unb: unb},
		{name: "valid v4 UNOW", unb: "UNB+UNOW:4+SENDER:14+RECIPIENT:14+20240315:0930+REF1'"}, // 0001 UNOW: V4 R1
		// ISO 9735-2 (V3) UNB: 0020 an..14, 0004 an..35, 0007 an..4
		{name: "0020 of 15", unb: strings.Replace(unb, "REF1", "REF456789012345", 1), code: 39, elem: 5, tag: "UNB"},
		{name: "sender of 36", unb: strings.Replace(unb, "SENDER", strings.Repeat("S", 36), 1), code: 39, elem: 2, comp: 1, tag: "UNB"},
		{name: "0007 of 5", unb: strings.Replace(unb, "SENDER:14", "SENDER:14567", 1), code: 39, elem: 2, comp: 2, tag: "UNB"},
		// 0035 n1, code list (V3): 1 (test) only; an error in every strictness
		{name: "0035 = 7", unb: strings.Replace(unb, "REF1'", "REF1++++++7'", 1), code: 12, elem: 11, tag: "UNB"},
		// 0019 HHMM
		{name: "time 2460", unb: strings.Replace(unb, "0930", "2460", 1), code: 12, elem: 4, comp: 2, tag: "UNB"},
		// 0017 is n6 in V3, n8 in V4 (ISO 9735-2:2002 UNB)
		{name: "v3 date of 8", unb: strings.Replace(unb, "240315", "20240315", 1), code: 39, elem: 4, comp: 1, tag: "UNB"},
		{name: "v4 date of 6", unb: strings.Replace(unb, "UNOA:3", "UNOA:4", 1), code: 40, elem: 4, comp: 1, tag: "UNB"},
		{name: "date 240231", unb: strings.Replace(unb, "240315", "240231", 1), code: 12, elem: 4, comp: 1, tag: "UNB"},
		// 0001: UNOW is a V4 level; under V3 it is code 2 (syntax level not supported)
		{name: "UNOW under v3", unb: strings.Replace(unb, "UNOA:3", "UNOW:3", 1), code: 2, elem: 1, comp: 1, tag: "UNB"},
		// an identifier of no UN level (IATA): strict only
		{name: "IATA", unb: strings.Replace(unb, "UNOA:3", "IATA:3", 1), strictOnly: true, code: 2, elem: 1, comp: 1, tag: "UNB"},
		// UNG 0038 an..6
		{name: "UNG 0038 of 8", unb: unb, group: "INVOICXX", code: 39, elem: 1, tag: "UNG"},
		{name: "UNG valid", unb: unb, group: "INVOIC"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := "REF1"
			if strings.Contains(c.unb, "REF456789012345") {
				ref = "REF456789012345"
			}
			data := c.unb + body + "UNZ+1+" + ref + "'"
			if c.group != "" {
				data = c.unb + "UNG+" + c.group + "+SENDER:14+RECIPIENT:14+240315:0930+G1+UN+D:96A'" + body + "UNE+1+G1'UNZ+1+" + ref + "'"
			}
			doc, err := edifact.Parse([]byte(data), &edifact.Options{Lenient: true})
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, data)
			}
			ich := doc.Interchanges[0]
			for _, v := range []*Validator{lenient, strict} {
				r := v.ValidateInterchange(ich)
				if !r.Validated {
					t.Fatalf("%s: not validated", v.Strictness())
				}
				err := r.Err()
				wantErr := c.code != 0 && (!c.strictOnly || v.Strictness() == Strict)
				if (err != nil) != wantErr {
					t.Fatalf("%s: error %v, want error %v; findings %v", v.Strictness(), err, wantErr, r.Findings)
				}
				if !wantErr {
					continue
				}
				f := err.(*Error).First()
				if f.Code != c.code || f.Element != c.elem || f.Component != c.comp || f.Tag != c.tag || f.Segment != 0 {
					t.Fatalf("%s: %+v, want code %d %s element %d component %d", v.Strictness(), f, c.code, c.tag, c.elem, c.comp)
				}
			}
		})
	}
}

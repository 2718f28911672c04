package ubl

import (
	"strings"
	"testing"
)

func TestRoundIsXPathRound(t *testing.T) {
	for in, want := range map[string]string{"2.5": "3", "-2.5": "-2", "2.4999": "2", "-2.51": "-3", "0": "0"} {
		x, _ := parseDecimal(in)
		if got := round(x).FloatString(0); got != want {
			t.Errorf("round(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"1.005": "1.01", "-1.005": "-1.00", "10.004": "10.00", "3.335": "3.34"} {
		x, _ := parseDecimal(in)
		if got := round2(x).FloatString(2); got != want {
			t.Errorf("round2(%s) = %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{"", "1e5", "1/2", "1.2.3", ".", "+", "0x10", "1,5"} {
		if _, ok := parseDecimal(bad); ok {
			t.Errorf("%q accepted as a decimal", bad)
		}
	}
}

// invoice builds a small invoice from this package's own fragments.
func invoice(body string) *Document {
	d, err := ParseBytes([]byte(`<Invoice xmlns="`+NSInvoice+`" xmlns:cac="`+NSCAC+`" xmlns:cbc="`+NSCBC+`">`+body+`</Invoice>`), nil)
	if err != nil {
		panic(err)
	}
	return d
}

func rules(d *Document, opts *Options) string {
	return strings.Join(FailedRules(d.Validate(opts)), " ")
}

func TestCalculationRulesRoundAsTheStandardSays(t *testing.T) {
	sub := func(taxable, tax, pct string) string {
		return `<cac:TaxTotal><cbc:TaxAmount currencyID="EUR">` + tax + `</cbc:TaxAmount><cac:TaxSubtotal><cbc:TaxableAmount currencyID="EUR">` + taxable +
			`</cbc:TaxableAmount><cbc:TaxAmount currencyID="EUR">` + tax + `</cbc:TaxAmount><cac:TaxCategory><cbc:ID>S</cbc:ID><cbc:Percent>` + pct +
			`</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal></cac:TaxTotal>`
	}
	cases := []struct {
		name, body string
		has, not   string
	}{
		{"VAT within one unit passes BR-CO-17", sub("100.00", "19.99", "19"), "", "BR-CO-17"},
		{"VAT off by more than one unit fails BR-CO-17", sub("100.00", "20.50", "19"), "BR-CO-17", ""},
		{"zero rate needs zero VAT", sub("100.00", "0.60", "0"), "BR-CO-17", ""},
		{"payable = inclusive - prepaid", `<cac:LegalMonetaryTotal><cbc:TaxInclusiveAmount currencyID="EUR">10.00</cbc:TaxInclusiveAmount><cbc:PrepaidAmount currencyID="EUR">2.50</cbc:PrepaidAmount><cbc:PayableAmount currencyID="EUR">7.50</cbc:PayableAmount></cac:LegalMonetaryTotal>`, "", "BR-CO-16"},
		{"rounding amount counts", `<cac:LegalMonetaryTotal><cbc:TaxInclusiveAmount currencyID="EUR">10.01</cbc:TaxInclusiveAmount><cbc:PayableRoundingAmount currencyID="EUR">-0.01</cbc:PayableRoundingAmount><cbc:PayableAmount currencyID="EUR">10.00</cbc:PayableAmount></cac:LegalMonetaryTotal>`, "", "BR-CO-16"},
		{"three decimals in an amount", `<cac:LegalMonetaryTotal><cbc:PayableAmount currencyID="EUR">1.001</cbc:PayableAmount></cac:LegalMonetaryTotal>`, "BR-DEC-18", ""},
		{"unknown currency", `<cac:LegalMonetaryTotal><cbc:PayableAmount currencyID="EU">1</cbc:PayableAmount></cac:LegalMonetaryTotal>`, "BR-CL-03", ""},
		{"date out of range", `<cbc:IssueDate>2026-02-30</cbc:IssueDate>`, "XSD", ""},
		{"out of order", `<cbc:IssueDate>2026-02-03</cbc:IssueDate><cbc:ID>1</cbc:ID>`, "XSD", ""},
	}
	for _, c := range cases {
		got := " " + rules(invoice(c.body), nil) + " "
		if c.has != "" && !strings.Contains(got, " "+c.has+" ") {
			t.Errorf("%s: %s not in %s", c.name, c.has, got)
		}
		if c.not != "" && strings.Contains(got, " "+c.not+" ") {
			t.Errorf("%s: %s in %s", c.name, c.not, got)
		}
	}
}

func TestStrictnessAndCause(t *testing.T) {
	d := invoice(`<cbc:DocumentCurrencyCode>XXY</cbc:DocumentCurrencyCode>`)
	var sev Severity
	for _, f := range d.Validate(&Options{Strictness: Lenient}) {
		if f.Rule == "BR-CL-04" {
			sev = f.Severity
		}
	}
	if sev != Warning {
		t.Fatalf("lenient BR-CL-04 severity %q", sev)
	}
	if fs := d.Validate(&Options{Strictness: Off}); fs != nil {
		t.Fatalf("off: %v", fs)
	}
	if c := Cause(d.Validate(nil)); c != "schema" { // XSD: cbc:ID and cbc:IssueDate missing
		t.Fatalf("cause %q", c)
	}
	if c := Cause([]Finding{{Rule: "BR-CO-16", Severity: Fatal}}); c != "business" {
		t.Fatalf("cause %q", c)
	}
	if c := Cause([]Finding{{Rule: "PEPPOL-EN16931-R004", Severity: Fatal}}); c != "partner-rejected" {
		t.Fatalf("cause %q", c)
	}
	if c := Cause([]Finding{{Rule: "BR-CL-04", Severity: Warning}}); c != "" {
		t.Fatalf("cause %q", c)
	}
}

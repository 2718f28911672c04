package ubl

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const open = `<?xml version="1.0"?>` + "\n" + `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">` + "\n"

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileXMLIsRefusedInBoundedMemory: each attack is refused by the
// guard with its reason and position, allocating a few KiB whatever the
// input size (the input itself is allocated before the measurement).
func TestHostileXMLIsRefusedInBoundedMemory(t *testing.T) {
	laughs := `<?xml version="1.0"?>
<!DOCTYPE Invoice [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol9 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><cbc:Note xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">&lol9;</cbc:Note></Invoice>`
	xxe := `<?xml version="1.0"?>
<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">&xxe;</Invoice>`
	deep := open + strings.Repeat("<a>", 10000) + strings.Repeat("</a>", 10000) + "</Invoice>"
	bigText := open + "<cbc:Note>" + strings.Repeat("A", 10<<20) + "</cbc:Note></Invoice>"
	cases := []struct {
		name, doc string
		lim       *Limits
		reason    string
		line      int
		msg       string
	}{
		{"billion laughs", laughs, nil, ReasonDoctype, 2, "DOCTYPE refused"},
		{"external entity", xxe, nil, ReasonDoctype, 2, "DOCTYPE refused"},
		{"entity reference without a DTD", open + "<cbc:Note>&xxe;</cbc:Note></Invoice>", nil, ReasonMalformed, 3, "not well-formed"},
		{"10 000-deep nesting", deep, nil, ReasonDepth, 3, "nested deeper than the limit of 64"},
		{"10 MiB text node, default limits", bigText, nil, ReasonSize, 1, "over the limit of 10485760"},
		{"10 MiB text node under a 64 MiB size limit", bigText, &Limits{MaxSize: 64 << 20}, ReasonText, 3, "text node longer than the limit of 8388608 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.doc)
			var err error
			n := allocated(func() { _, err = ParseBytes(data, c.lim) })
			var e *Error
			if !errors.As(err, &e) || e.Reason != c.reason || !strings.Contains(e.Msg, c.msg) {
				t.Fatalf("got %v, want reason %s with %q", err, c.reason, c.msg)
			}
			if c.reason != ReasonSize && e.Line != c.line {
				t.Fatalf("%v: line %d, want %d", e, e.Line, c.line)
			}
			if c.reason != ReasonMalformed && n > 64<<10 {
				t.Fatalf("refusal allocated %d bytes for a %d-byte input", n, len(data))
			}
			t.Logf("%v (allocated %d bytes for %d bytes of input)", e, n, len(data))
		})
	}
}

// FuzzParse: the guard and the parser never panic, every refusal is an
// *Error with a position, and what parses validates and renders as JSON.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(open + "<cbc:ID>1</cbc:ID><!-- c --><![CDATA[x]]></Invoice>"))
	f.Add([]byte("<!DOCTYPE x><Invoice/>"))
	for _, name := range []string{"invopop__gobl.ubl__invoice-complete.xml", "ConnectingEurope__eInvoicing-EN16931__CreditNote-Min_content_without_VAT.xml"} {
		if data, err := os.ReadFile(filepath.Join(corpus, "valid", name)); err == nil {
			f.Add(data)
		}
	}
	lim := &Limits{MaxSize: 1 << 20, MaxDepth: 32, MaxElements: 5000}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseBytes(data, lim)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.Column < 1 || e.Offset < 0 || e.Offset > int64(len(data)) {
				t.Fatalf("error %v (%T) without a valid position", err, err)
			}
			return
		}
		if IsUBL(data) != true {
			t.Fatal("parsed, but IsUBL is false")
		}
		for _, f := range doc.Validate(&Options{Profile: ProfilePeppol}) {
			if f.Rule == "" || f.XPath == "" || f.Line < 1 {
				t.Fatalf("finding without rule or position: %+v", f)
			}
		}
		var buf bytes.Buffer
		if err := doc.JSON(&buf); err != nil || !json.Valid(buf.Bytes()) {
			t.Fatalf("JSON: %v", err)
		}
	})
}

// TestValidationIsLinear: a document of n lines, n VAT breakdowns, n
// allowances and n unknown elements costs about four times as much to
// validate at 4n as at n (quadratic would be sixteen); past MaxFindings the
// rest are summarised in one LIMIT warning. Measured in bytes
// allocated, not time: the machine is shared.
func TestValidationIsLinear(t *testing.T) {
	build := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`<Invoice xmlns="` + NSInvoice + `" xmlns:cac="` + NSCAC + `" xmlns:cbc="` + NSCBC + `">`)
		cat := `<cac:TaxCategory><cbc:ID>S</cbc:ID><cbc:Percent>19</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:TaxCategory>`
		for i := 0; i < n; i++ {
			b.WriteString(`<cbc:Unknown/><cac:PayeeParty><cac:PartyName><cbc:Name>P</cbc:Name></cac:PartyName></cac:PayeeParty>`)
			b.WriteString(`<cac:AllowanceCharge><cbc:ChargeIndicator>false</cbc:ChargeIndicator><cbc:Amount currencyID="EUR">1</cbc:Amount>` + cat + `</cac:AllowanceCharge>`)
			b.WriteString(`<cac:TaxTotal><cbc:TaxAmount currencyID="EUR">1.90</cbc:TaxAmount><cac:TaxSubtotal><cbc:TaxableAmount currencyID="EUR">10</cbc:TaxableAmount><cbc:TaxAmount currencyID="EUR">1.90</cbc:TaxAmount>` + cat + `</cac:TaxSubtotal></cac:TaxTotal>`)
			b.WriteString(`<cac:InvoiceLine><cbc:ID>1</cbc:ID><cbc:LineExtensionAmount currencyID="EUR">10</cbc:LineExtensionAmount><cac:Item><cbc:Name>x</cbc:Name><cac:ClassifiedTaxCategory><cbc:ID>S</cbc:ID><cbc:Percent>19</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:ClassifiedTaxCategory></cac:Item></cac:InvoiceLine>`)
		}
		b.WriteString(`</Invoice>`)
		return []byte(b.String())
	}
	cost := func(n int) uint64 {
		d, err := ParseBytes(build(n), nil)
		if err != nil {
			t.Fatal(err)
		}
		var fs []Finding
		a := allocated(func() { fs = d.Validate(&Options{Profile: ProfilePeppol}) })
		if len(fs) != MaxFindings+1 || fs[len(fs)-1].Rule != "LIMIT" {
			t.Fatalf("n=%d: %d findings, last %+v", n, len(fs), fs[len(fs)-1])
		}
		return a
	}
	small, large := cost(500), cost(2000)
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Fatalf("validation allocated %d bytes at n=500, %d at n=2000 (x%.1f): not linear", small, large, ratio)
	} else {
		t.Logf("allocated %d bytes at n=500, %d at n=2000 (x%.1f)", small, large, ratio)
	}
}

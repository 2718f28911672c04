package ubl

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mlrDoc is this package's own fixture: an invoice whose totals do not add up.
const mlrDoc = `<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID>
  <cbc:ID>INV-7 &amp; co</cbc:ID>
  <cbc:IssueDate>2026-11-30</cbc:IssueDate>
  <cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>
  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="EUR">10.00</cbc:LineExtensionAmount>
    <cbc:TaxExclusiveAmount currencyID="EUR">10.00</cbc:TaxExclusiveAmount>
    <cbc:TaxInclusiveAmount currencyID="EUR">12.00</cbc:TaxInclusiveAmount>
    <cbc:PayableAmount currencyID="EUR">99.00</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>
</Invoice>
`

func TestMLRGolden(t *testing.T) {
	doc, findings, err := Check([]byte(mlrDoc), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := MLRInput{ID: "MLR-1", IssueDate: "2026-12-01", IssueTime: "10:00:00",
		Sender: Endpoint{"0088", "5790000435968"}, Receiver: Endpoint{"0192", "987654325"},
		ReferenceID: doc.Root.Get("cbc:ID"), Findings: findings}
	got, err := MLR(in)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "mlr_rejected.xml")
	if os.Getenv("UBL_GOLDEN") == "1" {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("MLR differs from %s (UBL_GOLDEN=1 rewrites it):\n%s", golden, got)
	}
	// Well-formed, rejected, and every failed rule id named.
	var resp struct {
		Code  string   `xml:"DocumentResponse>Response>ResponseCode"`
		Lines []string `xml:"DocumentResponse>LineResponse>Response>Description"`
		Ref   string   `xml:"DocumentResponse>DocumentReference>ID"`
	}
	if err := xml.Unmarshal(got, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Code != "RE" || resp.Ref != "INV-7 & co" || len(resp.Lines) != len(findings) {
		t.Fatalf("response %+v", resp)
	}
	for _, id := range append(FailedRules(findings), "BR-CO-16", "BR-06") {
		if !bytes.Contains(got, []byte("["+id+"]")) {
			t.Errorf("rule %s not named", id)
		}
	}
}

func TestMLRAcceptedAndRefused(t *testing.T) {
	base := MLRInput{ID: "M", IssueDate: "2026-12-01", Sender: Endpoint{"0088", "1"}, Receiver: Endpoint{"0088", "2"}, ReferenceID: "X"}
	ok, err := MLR(base)
	if err != nil || !bytes.Contains(ok, []byte("<cbc:ResponseCode>AP</cbc:ResponseCode>")) || bytes.Contains(ok, []byte("LineResponse")) {
		t.Fatalf("accepted: %v\n%s", err, ok)
	}
	_, perr := ParseBytes([]byte("<!DOCTYPE x>\n<Invoice/>"), nil)
	refused := base
	refused.Refusal = perr.(*Error)
	out, err := MLR(refused)
	if err != nil || !strings.Contains(string(out), "Rejected: DOCTYPE") || !strings.Contains(string(out), ">SV<") {
		t.Fatalf("refused: %v\n%s", err, out)
	}
	if _, err := MLR(MLRInput{ID: "M"}); err == nil {
		t.Fatal("MLR without parties accepted")
	}
}

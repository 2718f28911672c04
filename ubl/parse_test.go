package ubl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseCanonicalNamesWhateverThePrefix(t *testing.T) {
	doc := `<x:Invoice xmlns:x="` + NSInvoice + `" xmlns:b="` + NSCBC + `" xmlns:a="` + NSCAC + `">
  <b:ID>  INV 1 </b:ID>
  <a:InvoiceLine><b:ID>1</b:ID></a:InvoiceLine>
  <a:InvoiceLine><b:ID>2</b:ID><b:LineExtensionAmount currencyID="EUR">1.00</b:LineExtensionAmount></a:InvoiceLine>
</x:Invoice>`
	d, err := ParseBytes([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Type != TypeInvoice || d.Root.Name != "Invoice" {
		t.Fatalf("type %q root %q", d.Type, d.Root.Name)
	}
	if got := d.Root.Get("cbc:ID"); got != "INV 1" {
		t.Fatalf("ID %q", got)
	}
	amt := d.Root.Find("cac:InvoiceLine/cbc:LineExtensionAmount")
	if amt == nil || amt.Attr("currencyID") != "EUR" {
		t.Fatalf("amount %+v", amt)
	}
	if x := amt.XPath(); x != "/Invoice/cac:InvoiceLine[2]/cbc:LineExtensionAmount" {
		t.Fatalf("xpath %q", x)
	}
	if amt.Line != 4 || amt.Column != 32 {
		t.Fatalf("position %d:%d", amt.Line, amt.Column)
	}
}

func TestParseRefusesMalformedWithPosition(t *testing.T) {
	cases := map[string]string{
		"mismatched end tag": `<Invoice xmlns="` + NSInvoice + `">` + "\n<a></b></Invoice>",
		"unknown entity":     `<Invoice xmlns="` + NSInvoice + `">` + "\n<a>&xxe;</a></Invoice>",
		"cut off":            `<Invoice xmlns="` + NSInvoice + `">` + "\n<a>",
		"two roots":          `<Invoice xmlns="` + NSInvoice + `"/><Invoice xmlns="` + NSInvoice + `"/>`,
		"text after root":    `<Invoice xmlns="` + NSInvoice + `"/>junk`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseBytes([]byte(doc), nil)
			e := wantReason(t, err, ReasonMalformed)
			if e.Rule() != "XML-WF" {
				t.Fatalf("rule %q", e.Rule())
			}
		})
	}
}

func TestParseEveryValidCorpusDocumentToJSON(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpus, "valid", "*"))
	if len(files) == 0 {
		t.Skip("corpus not found at " + corpus)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseBytes(data, nil)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		var buf bytes.Buffer
		if err := d.JSON(&buf); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Type  string           `json:"type"`
			BT    map[string]any   `json:"bt"`
			Lines []map[string]any `json:"BG-25"`
			Doc   map[string]any   `json:"document"`
		}
		if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		wantType := TypeInvoice
		if strings.Contains(filepath.Base(f), "CreditNote") || strings.Contains(f, "creditnote") || strings.Contains(f, "credit-note") || strings.Contains(f, "Kreditering") {
			wantType = TypeCreditNote
		}
		if v.Type != wantType || v.BT["BT-1"] == nil || v.BT["BT-2"] == nil || v.BT["BT-5"] == nil || len(v.Lines) == 0 || v.Lines[0]["BT-131"] == nil || v.Doc["name"] == nil {
			t.Errorf("%s: view %s %v lines %d", filepath.Base(f), v.Type, v.BT, len(v.Lines))
		}
		if k := d.LedgerKey(); strings.Count(k, "|") != 3 || strings.HasSuffix(k, "|") {
			t.Errorf("%s: ledger key %q", filepath.Base(f), k)
		}
	}
}

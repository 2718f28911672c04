package ubl

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/edihub/edihub/escape"
)

// View is the JSON view of a document: the EN 16931 business terms keyed by
// BT id (bt.go has the mapping to UBL paths), the repeating groups as arrays
// of the same, and the full document as an element tree.
type View struct {
	Type            string           `json:"type"` // INVOICE or CREDITNOTE
	Terms           map[string]any   `json:"bt"`
	Allowances      []map[string]any `json:"BG-20,omitempty"`
	Charges         []map[string]any `json:"BG-21,omitempty"`
	VATBreakdown    []map[string]any `json:"BG-23,omitempty"`
	Attachments     []map[string]any `json:"BG-24,omitempty"`
	Lines           []map[string]any `json:"BG-25"`
	Document        *jsonElement     `json:"document"`
	MappingDocument string           `json:"mapping"`
}

// jsonElement is one element of the full document.
type jsonElement struct {
	Name     string            `json:"name"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	Text     string            `json:"text,omitempty"`
	Children []*jsonElement    `json:"children,omitempty"`
}

// View builds the JSON view.
func (d *Document) View() *View {
	r := d.Root
	v := &View{Type: d.Type, Terms: terms(r, documentTerms), Lines: []map[string]any{},
		MappingDocument: "EN 16931-3-2 UBL binding; ids ending -scheme, -mime, -filename are attributes of the term"}
	cur := r.Get("cbc:DocumentCurrencyCode")
	taxCur := r.Get("cbc:TaxCurrencyCode")
	for _, ta := range r.Select("cac:TaxTotal/cbc:TaxAmount") {
		switch c := ta.Attr("currencyID"); {
		case c == cur:
			v.Terms["BT-110"] = ta.Value()
		case taxCur != "" && c == taxCur:
			v.Terms["BT-111"] = ta.Value()
		}
	}
	for _, ac := range r.Children("cac:AllowanceCharge") {
		charge := ac.Get("cbc:ChargeIndicator") == "true"
		m := terms(ac, allowanceChargeTerms[charge])
		if charge {
			v.Charges = append(v.Charges, m)
		} else {
			v.Allowances = append(v.Allowances, m)
		}
	}
	for _, st := range r.Select("cac:TaxTotal/cac:TaxSubtotal") {
		v.VATBreakdown = append(v.VATBreakdown, terms(st, vatBreakdownTerms))
	}
	for _, ad := range r.Children("cac:AdditionalDocumentReference") {
		v.Attachments = append(v.Attachments, terms(ad, attachmentTerms))
	}
	for _, l := range r.Select("cac:InvoiceLine|cac:CreditNoteLine") {
		v.Lines = append(v.Lines, terms(l, lineTerms))
	}
	v.Document = tree(r)
	return v
}

// JSON writes the view as one JSON document, safe to print (escape.JSONBytes).
func (d *Document) JSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d.View()); err != nil {
		return err
	}
	_, err := w.Write(escape.JSONBytes(buf.Bytes()))
	return err
}

func terms(e *Element, ts []term) map[string]any {
	m := map[string]any{}
	for _, t := range ts {
		if _, done := m[t.BT]; done {
			continue // BT-9: the first binding that is present wins
		}
		vals := termValues(e, t.Path)
		switch {
		case len(vals) == 0:
		case t.Multi:
			m[t.BT] = vals
		default:
			m[t.BT] = vals[0]
		}
	}
	return m
}

func termValues(e *Element, path string) []string {
	attr := ""
	if i := strings.LastIndex(path, "/@"); i >= 0 {
		path, attr = path[:i], path[i+2:]
	}
	var out []string
	for _, x := range e.Select(path) {
		switch {
		case attr == "":
			out = append(out, x.Value())
		case x.HasAttr(attr):
			out = append(out, x.Attr(attr))
		}
	}
	return out
}

func tree(e *Element) *jsonElement {
	j := &jsonElement{Name: e.Name, Text: e.Text}
	if len(e.Attrs) > 0 {
		j.Attrs = make(map[string]string, len(e.Attrs))
		for _, a := range e.Attrs {
			j.Attrs[a.Name] = a.Value
		}
	}
	for _, k := range e.Kids {
		j.Children = append(j.Children, tree(k))
	}
	return j
}

// LedgerKey is what identifies an invoice for duplicate detection: the
// seller's electronic address (BT-34 with its scheme, or else the seller
// VAT, legal or party identifier), the invoice number (BT-1) and the issue
// date (BT-2), joined by '|'. The hub prefixes the partner.
func (d *Document) LedgerKey() string {
	r := d.Root
	s := r.SelectOne(seller + "cbc:EndpointID")
	sellerID := ""
	if s != nil {
		sellerID = s.Attr("schemeID") + ":" + s.Value()
	} else {
		for _, p := range []string{seller + "cac:PartyTaxScheme" + vatTS + "/cbc:CompanyID", seller + "cac:PartyLegalEntity/cbc:CompanyID", seller + "cac:PartyIdentification/cbc:ID", seller + "cac:PartyLegalEntity/cbc:RegistrationName"} {
			if v := r.SelectOne(p).Value(); v != "" {
				sellerID = v
				break
			}
		}
	}
	return d.Type + "|" + sellerID + "|" + r.Get("cbc:ID") + "|" + r.Get("cbc:IssueDate")
}

package ubl

import "strings"

// UBL syntax binding rules of EN 16931 (UBL-SR-*: how often a business
// term may occur in UBL; UBL-DT-*: data types), from
// rules/schematron/UBL/EN16931-UBL-syntax.sch. Of the UBL-CR-* rules the
// two fatal ones (666, 673) are implemented; the 674 warnings about UBL
// elements EN 16931 does not use are not: they never reject a document.

// maxCount rules: count(path) <= max in a context.
type maxCount struct {
	rule string
	path string
	max  int
	what string
}

var rootCounts = []maxCount{
	{"UBL-SR-01", "cac:ContractDocumentReference/cbc:ID", 1, "Contract identifier"},
	{"UBL-SR-02", "cac:ReceiptDocumentReference/cbc:ID", 1, "Receive advice identifier"},
	{"UBL-SR-03", "cac:DespatchDocumentReference/cbc:ID", 1, "Despatch advice identifier"},
	{"UBL-SR-04", "cac:AdditionalDocumentReference[cbc:DocumentTypeCode=130]/cbc:ID", 1, "Invoice object identifier"},
	{"UBL-SR-05", "cac:PaymentTerms/cbc:Note", 1, "Payment terms"},
	{"UBL-SR-08", "cac:InvoicePeriod", 1, "Invoice period"},
	{"UBL-SR-09", sellerParty + "/cac:PartyLegalEntity/cbc:RegistrationName", 1, "Seller name"},
	{"UBL-SR-10", sellerParty + "/cac:PartyName/cbc:Name", 1, "Seller trader name"},
	{"UBL-SR-11", sellerParty + "/cac:PartyLegalEntity/cbc:CompanyID", 1, "Seller legal registration identifier"},
	{"UBL-SR-12", sellerParty + "/cac:PartyTaxScheme" + vatPred + "/cbc:CompanyID", 1, "Seller VAT identifier"},
	{"UBL-SR-13", sellerParty + "/cac:PartyTaxScheme[cac:TaxScheme/cbc:ID!=VAT]/cbc:CompanyID", 1, "Seller tax registration"},
	{"UBL-SR-14", sellerParty + "/cac:PartyLegalEntity/cbc:CompanyLegalForm", 1, "Seller additional legal information"},
	{"UBL-SR-15", buyerParty + "/cac:PartyLegalEntity/cbc:RegistrationName", 1, "Buyer name"},
	{"UBL-SR-16", buyerParty + "/cac:PartyIdentification/cbc:ID", 1, "Buyer identifier"},
	{"UBL-SR-17", buyerParty + "/cac:PartyLegalEntity/cbc:CompanyID", 1, "Buyer legal registration identifier"},
	{"UBL-SR-18", buyerParty + "/cac:PartyTaxScheme" + vatPred + "/cbc:CompanyID", 1, "Buyer VAT identifier"},
	{"UBL-SR-24", "cac:Delivery", 1, "Deliver to information"},
	{"UBL-SR-39", "cac:ProjectReference/cbc:ID", 1, "Project reference"},
	{"UBL-SR-40", buyerParty + "/cac:PartyName/cbc:Name", 1, "Buyer trade name"},
	{"UBL-SR-45", "cac:PaymentMeans/cbc:PaymentDueDate", 1, "Due Date"},
	{"UBL-SR-49", "cac:InvoicePeriod/cbc:DescriptionCode", 1, "Value tax point date"},
	{"UBL-SR-54", "cac:PaymentMeans/cac:CardAccount", 1, "Payment card information"},
	{"UBL-SR-55", "cac:PaymentMeans/cac:PaymentMandate", 1, "Direct debit information"},
	{"UBL-SR-56", "cac:OriginatorDocumentReference/cbc:ID", 1, "Tender or lot reference"},
}

var lineCounts = []maxCount{
	{"UBL-SR-34", "cbc:Note", 1, "Invoice line note"},
	{"UBL-SR-35", "cac:OrderLineReference/cbc:LineID", 1, "Referenced purchase order line identifier"},
	{"UBL-SR-36", "cac:InvoicePeriod", 1, "Invoice line period"},
	{"UBL-SR-37", "cac:Price/cac:AllowanceCharge/cbc:Amount", 1, "Item price discount"},
	{"UBL-SR-50", "cac:Item/cbc:Description", 1, "Item description"},
	{"UBL-SR-52", "cac:DocumentReference", 1, "Document reference"},
}

func (v *validator) counts(ctx *Element, rules []maxCount) {
	for _, c := range rules {
		n := len(ctx.Select(c.path))
		v.check(n <= c.max, c.rule, ctx, "%s shall occur maximum %d time(s) (%d found)", c.what, c.max, n)
	}
}

func (v *validator) syntaxRules() {
	r := v.root
	v.counts(r, rootCounts)
	sepa := 0
	for _, id := range v.under("cac:PartyIdentification", "cbc:ID") {
		if strings.ToUpper(id.Attr("schemeID")) == "SEPA" {
			sepa++
		}
	}
	v.check(sepa <= 1, "UBL-SR-29", r, "Bank creditor reference shall occur maximum once")
	v.check(distinct(v.all("cbc:PaymentID")) <= 1, "UBL-SR-44", r, "An Invoice may only have one unique PaymentID, but the PaymentID may be used for multiple PaymentMeans")
	names := 0
	for _, c := range r.Select("cac:PaymentMeans/cbc:PaymentMeansCode") {
		if c.HasAttr("name") {
			names++
		}
	}
	v.check(names <= 1, "UBL-SR-46", r, "Payment means text shall occur maximum once")
	v.check(distinct(v.all("cbc:PaymentMeansCode")) <= 1, "UBL-SR-47", r, "When there are more than one payment means code, they shall be equal")
	for _, l := range v.lines() {
		v.counts(l, lineCounts)
		v.check(len(l.Select("cac:Item/cac:ClassifiedTaxCategory")) == 1, "UBL-SR-48", l, "Invoice lines shall have one and only one classified tax category")
	}
	sellerName := r.Select(sellerParty + "/cac:PartyLegalEntity/cbc:RegistrationName")
	for _, p := range v.all("cac:PayeeParty") {
		names := p.Select("cac:PartyName/cbc:Name")
		differs := len(names) > 0 && len(sellerName) > 0 && anyDiffers(names, sellerName)
		nonSEPA := 0
		for _, id := range p.Select("cac:PartyIdentification/cbc:ID") {
			if strings.ToUpper(id.Attr("schemeID")) != "SEPA" {
				nonSEPA++
			}
		}
		v.check(len(names) <= 1 && differs, "UBL-SR-19", p, "Payee name shall occur maximum once, if the Payee is different from the Seller")
		v.check(nonSEPA <= 1 && differs, "UBL-SR-20", p, "Payee identifier shall occur maximum once, if the Payee is different from the Seller")
		v.check(len(p.Select("cac:PartyLegalEntity/cbc:CompanyID")) <= 1 && differs, "UBL-SR-21", p, "Payee legal registration identifier shall occur maximum once, if the Payee is different from the Seller")
	}
	for _, pm := range v.all("cac:PaymentMeans") {
		v.check(len(pm.Children("cbc:PaymentID")) <= 1, "UBL-SR-26", pm, "Payment reference shall occur maximum once")
		v.check(len(pm.Children("cbc:PaymentMeansCode")) <= 1, "UBL-SR-27", pm, "Payment means text shall occur maximum once")
		v.check(len(pm.Select("cac:PaymentMandate/cbc:ID")) <= 1, "UBL-SR-28", pm, "Mandate reference identifier shall occur maximum once")
	}
	for _, b := range v.all("cac:BillingReference") {
		v.check(len(b.Children("cac:InvoiceDocumentReference")) <= 1, "UBL-SR-06", b, "Preceding invoice reference shall occur maximum once")
		v.check(exists(b, "cac:InvoiceDocumentReference/cbc:ID"), "UBL-SR-07", b, "If there is a preceding invoice reference, the preceding invoice number shall be present")
	}
	for _, t := range v.all("cac:TaxRepresentativeParty") {
		v.check(len(t.Select("cac:PartyName/cbc:Name")) <= 1, "UBL-SR-22", t, "Seller tax representative name shall occur maximum once, if the Seller has a tax representative")
		v.check(len(t.Select("cac:PartyTaxScheme/cbc:CompanyID")) <= 1, "UBL-SR-23", t, "Seller tax representative VAT identifier shall occur maximum once, if the Seller has a tax representative")
	}
	for _, st := range v.all("cac:TaxSubtotal") {
		v.check(len(st.Select("cac:TaxCategory/cbc:TaxExemptionReason")) <= 1, "UBL-SR-32", st, "VAT exemption reason text shall occur maximum once")
	}
	for _, d := range v.all("cac:Delivery") {
		v.check(len(d.Select("cac:DeliveryParty/cac:PartyName/cbc:Name")) <= 1, "UBL-SR-25", d, "Deliver to party name shall occur maximum once")
	}
	for _, ac := range v.all("cac:AllowanceCharge") {
		n := len(ac.Children("cbc:AllowanceChargeReason"))
		if isFalse(ac) {
			v.check(n <= 1, "UBL-SR-30", ac, "Document level allowance reason shall occur maximum once")
		} else if isTrue(ac) {
			v.check(n <= 1, "UBL-SR-31", ac, "Document level charge reason shall occur maximum once")
		}
	}
	for _, pts := range v.all("cac:PartyTaxScheme") {
		v.check(exists(pts, "cac:TaxScheme/cbc:ID") && exists(pts, "cbc:CompanyID"), "UBL-SR-53", pts, "Each Party tax scheme shall contain both a tax scheme identifier and a company identifier")
	}
	for _, p := range v.under("cac:AccountingSupplierParty", "cac:Party") {
		v.check(len(p.Children("cac:PartyTaxScheme")) <= 2, "UBL-SR-42", p, "Party tax scheme shall occur maximum twice in accounting supplier party")
	}
	for _, a := range v.all("cac:AdditionalDocumentReference") {
		v.check(len(a.Children("cbc:DocumentDescription")) <= 1, "UBL-SR-33", a, "Supporting document description shall occur maximum once")
		code := a.Get("cbc:DocumentTypeCode")
		id := a.Child("cbc:ID")
		v.check(code == "130" || r.Name == "CreditNote" && code == "50" || !(id != nil && id.HasAttr("schemeID")) && !exists(a, "cbc:DocumentTypeCode"), "UBL-SR-43", a, "Scheme identifier shall only be used for invoiced object (document type code with value 130 or 50)")
	}
	att, desc := false, false
	for _, a := range v.all("cac:AdditionalDocumentReference") {
		if a.Get("cbc:DocumentTypeCode") == "130" {
			att = att || exists(a, "cac:Attachment")
			desc = desc || exists(a, "cbc:DocumentDescription")
		}
	}
	v.check(!att, "UBL-CR-666", r, "A UBL invoice shall not include an AdditionalDocumentReference simultaneously referring an Invoice Object Identifier and an Attachment")
	v.check(!desc, "UBL-CR-673", r, "A UBL invoice shall not include an AdditionalDocumentReference simultaneously referring an Invoice Object Identifier and an Document Description")
	for _, name := range []string{"cac:PostalAddress", "cac:Address"} {
		for _, a := range v.all(name) {
			v.check(len(a.Children("cac:AddressLine")) <= 1, "UBL-SR-51", a, "An address can only have one third line")
		}
	}
	r.Walk(func(e *Element) {
		local := e.Name[strings.IndexByte(e.Name, ':')+1:]
		if strings.HasSuffix(e.Name, "Amount") && !strings.HasSuffix(e.Name, "PriceAmount") && !inPriceWithAllowance(e) {
			v.check(fractionDigits(e.Value()) <= 2, "UBL-DT-01", e, "Amounts shall be decimal up to two fraction digits")
		}
		if strings.HasSuffix(local, "BinaryObject") {
			v.check(e.HasAttr("mimeCode"), "UBL-DT-06", e, "Binary object elements shall contain the mime code attribute")
			v.check(e.HasAttr("filename"), "UBL-DT-07", e, "Binary object elements shall contain the file name attribute")
		}
	})
}

// inPriceWithAllowance: an ancestor cac:Price has a cac:AllowanceCharge child.
func inPriceWithAllowance(e *Element) bool {
	for x := e.Parent; x != nil; x = x.Parent {
		if x.Name == "cac:Price" && x.Child("cac:AllowanceCharge") != nil {
			return true
		}
	}
	return false
}

func distinct(es []*Element) int {
	seen := map[string]bool{}
	for _, e := range es {
		seen[e.Text] = true
	}
	return len(seen)
}

// anyDiffers is XPath's general comparison a != b: some pair differs,
// that is both are non-empty and hold more than one distinct value.
func anyDiffers(a, b []*Element) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	seen := map[string]bool{}
	for _, x := range append(append([]*Element{}, a...), b...) {
		seen[x.Value()] = true
		if len(seen) > 1 {
			return true
		}
	}
	return false
}

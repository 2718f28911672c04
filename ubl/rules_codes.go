package ubl

import "strings"

// Code list rules (BR-CL-*) of the EN 16931 UBL binding; the lists are
// generated from the schematron (code_lists.go), the contexts are these.

func set(codes ...string) map[string]bool {
	m := make(map[string]bool, len(codes))
	for _, c := range codes {
		m[c] = true
	}
	return m
}

// inList is the schematron's not(contains(v, ' ')) and contains(' LIST ', concat(' ', v, ' ')).
func inList(rule, v string) bool {
	return v != "" && !strings.Contains(v, " ") && codeLists[rule][v]
}

var amountNames = set("cbc:Amount", "cbc:BaseAmount", "cbc:PriceAmount", "cbc:TaxAmount", "cbc:TaxableAmount", "cbc:LineExtensionAmount",
	"cbc:TaxExclusiveAmount", "cbc:TaxInclusiveAmount", "cbc:AllowanceTotalAmount", "cbc:ChargeTotalAmount", "cbc:PrepaidAmount",
	"cbc:PayableRoundingAmount", "cbc:PayableAmount")

var attachmentMIME = set("application/pdf", "image/png", "image/jpeg", "text/csv",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "application/vnd.oasis.opendocument.spreadsheet")

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

func (v *validator) codeListRules() {
	v.root.Walk(func(e *Element) {
		parent := ""
		if e.Parent != nil {
			parent = e.Parent.Name
		}
		val := e.Value()
		switch {
		case e.Name == "cbc:InvoiceTypeCode":
			v.check(inList("BR-CL-01", val), "BR-CL-01", e, "The document type code %q must be coded by the invoice and credit note related code lists of UNTDID 1001", clip(val, 20))
		case e.Name == "cbc:CreditNoteTypeCode":
			v.check(inList("BR-CL-01#2", val), "BR-CL-01", e, "The document type code %q must be coded by the invoice and credit note related code lists of UNTDID 1001", clip(val, 20))
		case amountNames[e.Name]:
			c := norm(e.Attr("currencyID"))
			v.check(inList("BR-CL-03", c), "BR-CL-03", e, "currencyID %q must be coded using ISO code list 4217 alpha-3", clip(c, 20))
		case e.Name == "cbc:DocumentCurrencyCode":
			v.check(inList("BR-CL-04", val), "BR-CL-04", e, "Invoice currency code %q must be coded using ISO code list 4217 alpha-3", clip(val, 20))
		case e.Name == "cbc:TaxCurrencyCode":
			v.check(inList("BR-CL-05", val), "BR-CL-05", e, "Tax currency code %q must be coded using ISO code list 4217 alpha-3", clip(val, 20))
		case e.Name == "cbc:DescriptionCode" && parent == "cac:InvoicePeriod":
			v.check(inList("BR-CL-06", val), "BR-CL-06", e, "Value added tax point date code %q must be coded using a restriction of UNTDID 2005", clip(val, 20))
		case e.Name == "cbc:ID" && e.HasAttr("schemeID") && (parent == "cac:AdditionalDocumentReference" || parent == "cac:DocumentReference") && e.Parent.Get("cbc:DocumentTypeCode") == "130":
			s := norm(e.Attr("schemeID"))
			v.check(inList("BR-CL-07", s), "BR-CL-07", e, "Object identifier identification scheme %q should use a code from UNTDID 1153", clip(s, 20))
		case e.Name == "cbc:ID" && e.HasAttr("schemeID") && parent == "cac:PartyIdentification":
			s := norm(e.Attr("schemeID"))
			sepa := s == "SEPA" && (hasAncestor(e, "cac:AccountingSupplierParty") || hasAncestor(e, "cac:PayeeParty"))
			v.check(inList("BR-CL-10", s) || sepa, "BR-CL-10", e, "Any identifier identification scheme %q shall be coded using one of the ISO 6523 ICD list", clip(s, 20))
		case e.Name == "cbc:CompanyID" && e.HasAttr("schemeID") && parent == "cac:PartyLegalEntity":
			s := norm(e.Attr("schemeID"))
			v.check(inList("BR-CL-11", s), "BR-CL-11", e, "Any registration identifier identification scheme %q shall be coded using one of the ISO 6523 ICD list", clip(s, 20))
		case e.Name == "cbc:ItemClassificationCode" && e.HasAttr("listID") && parent == "cac:CommodityClassification":
			s := norm(e.Attr("listID"))
			v.check(inList("BR-CL-13", s), "BR-CL-13", e, "Item classification identifier identification scheme %q shall be coded using one of the UNTDID 7143 list", clip(s, 20))
		case e.Name == "cbc:IdentificationCode" && parent == "cac:Country":
			v.check(inList("BR-CL-14", val), "BR-CL-14", e, "Country code %q shall be coded using ISO code list 3166-1", clip(val, 20))
		case e.Name == "cbc:IdentificationCode" && parent == "cac:OriginCountry":
			v.check(inList("BR-CL-15", val), "BR-CL-15", e, "Country code %q shall be coded using ISO code list 3166-1", clip(val, 20))
		case e.Name == "cbc:PaymentMeansCode" && parent == "cac:PaymentMeans":
			v.check(inList("BR-CL-16", val), "BR-CL-16", e, "Payment means %q shall be coded using a restriction of UNTDID 4461", clip(val, 20))
		case e.Name == "cbc:ID" && parent == "cac:TaxCategory":
			v.check(inList("BR-CL-17", val), "BR-CL-17", e, "Invoice tax categories %q MUST be coded using UNCL5305 code list", clip(val, 20))
		case e.Name == "cbc:ID" && parent == "cac:ClassifiedTaxCategory":
			v.check(inList("BR-CL-18", val), "BR-CL-18", e, "Invoice tax categories %q MUST be coded using UNCL5305 code list", clip(val, 20))
		case e.Name == "cbc:AllowanceChargeReasonCode" && parent == "cac:AllowanceCharge" && isFalse(e.Parent):
			v.check(inList("BR-CL-19", val), "BR-CL-19", e, "Coded allowance reasons %q MUST belong to the UNCL 5189 code list", clip(val, 20))
		case e.Name == "cbc:AllowanceChargeReasonCode" && parent == "cac:AllowanceCharge" && isTrue(e.Parent):
			v.check(inList("BR-CL-20", val), "BR-CL-20", e, "Coded charge reasons %q MUST belong to the UNCL 7161 code list", clip(val, 20))
		case e.Name == "cbc:ID" && e.HasAttr("schemeID") && parent == "cac:StandardItemIdentification":
			s := norm(e.Attr("schemeID"))
			v.check(inList("BR-CL-21", s), "BR-CL-21", e, "Item standard identifier scheme identifier %q MUST belong to the ISO 6523 ICD code list", clip(s, 20))
		case e.Name == "cbc:TaxExemptionReasonCode":
			v.check(!strings.Contains(val, " ") && codeLists["BR-CL-22"][strings.ToUpper(val)], "BR-CL-22", e, "Tax exemption reason code %q identifier scheme identifier MUST belong to the CEF VATEX code list", clip(val, 20))
		case (e.Name == "cbc:InvoicedQuantity" || e.Name == "cbc:BaseQuantity" || e.Name == "cbc:CreditedQuantity") && e.HasAttr("unitCode"):
			u := norm(e.Attr("unitCode"))
			v.check(inList("BR-CL-23", u), "BR-CL-23", e, "Unit code %q MUST be coded according to the UN/ECE Recommendation 20 with Rec 21 extension", clip(u, 20))
		case e.Name == "cbc:EmbeddedDocumentBinaryObject" && e.HasAttr("mimeCode"):
			v.check(attachmentMIME[e.Attr("mimeCode")], "BR-CL-24", e, "For Mime code %q in attribute use MIMEMediaType", clip(e.Attr("mimeCode"), 40))
		case e.Name == "cbc:EndpointID" && e.HasAttr("schemeID"):
			s := norm(e.Attr("schemeID"))
			v.check(inList("BR-CL-25", s), "BR-CL-25", e, "Endpoint identifier scheme identifier %q MUST belong to the CEF EAS code list", clip(s, 20))
		case e.Name == "cbc:ID" && e.HasAttr("schemeID") && parent == "cac:DeliveryLocation":
			s := norm(e.Attr("schemeID"))
			v.check(inList("BR-CL-26", s), "BR-CL-26", e, "Delivery location identifier scheme identifier %q MUST belong to the ISO 6523 ICD code list", clip(s, 20))
		}
	})
	for _, pts := range v.all("cac:PartyTaxScheme") {
		if !pts.matches("cac:TaxScheme/cbc:ID=VAT") {
			continue
		}
		id := pts.Child("cbc:CompanyID")
		v.check(countryPrefixOK(id), "BR-CO-09", pts, "The Seller VAT identifier (BT-31), the Seller tax representative VAT identifier (BT-63) and the Buyer VAT identifier (BT-48) shall have a prefix in accordance with ISO code ISO 3166-1 alpha-2")
	}
}

func hasAncestor(e *Element, name string) bool {
	for x := e.Parent; x != nil; x = x.Parent {
		if x.Name == name {
			return true
		}
	}
	return false
}

// countryPrefixOK is contains(' AD AE ... ', substring(cbc:CompanyID, 1, 2)):
// true for an empty or missing identifier, as XPath's contains of ” is.
func countryPrefixOK(id *Element) bool {
	s := ""
	if id != nil {
		s = id.Text
	}
	if r := []rune(s); len(r) > 2 {
		s = string(r[:2])
	}
	switch len(s) {
	case 0:
		return true
	case 2:
		return codeLists["BR-CO-09"][s]
	}
	for c := range codeLists["BR-CO-09"] {
		if strings.Contains(c, s) {
			return true
		}
	}
	return false
}

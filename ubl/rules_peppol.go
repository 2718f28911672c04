package ubl

import (
	"regexp"
	"strings"
)

// Peppol BIS Billing 3.0 rules, run with ProfilePeppol. OpenPEPPOL's
// schematron may not be redistributed, so it is not in the corpus: these
// are written from the rules as the BIS 3 specification states them, and
// the conformance test checks them against what the official artefacts
// reported for every corpus file (observed_peppol in SOURCES.tsv). This is a
// subset: PeppolRules lists it; the national rules (DE-R, NO-R, SE-R...),
// PEPPOL-COMMON identifier checksums and the other PEPPOL-EN16931 rules are
// not implemented.

// PeppolCustomizationID is the BIS Billing 3.0 specification identifier.
const PeppolCustomizationID = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0"

var peppolProfileRE = regexp.MustCompile(`^urn:fdc:peppol\.eu:2017:poacc:billing:([0-9]{2}):1\.0$`)

var (
	peppolInvoiceTypes    = set("71", "80", "82", "84", "102", "218", "219", "331", "380", "382", "383", "386", "388", "393", "395", "553", "575", "623", "780", "817", "870", "875", "876", "877")
	peppolCreditNoteTypes = set("81", "83", "381", "396", "532")
)

// PeppolRules are the Peppol BIS 3 rule ids this package implements.
var PeppolRules = []string{"PEPPOL-EN16931-R001", "PEPPOL-EN16931-R003", "PEPPOL-EN16931-R004", "PEPPOL-EN16931-R005",
	"PEPPOL-EN16931-R007", "PEPPOL-EN16931-R008", "PEPPOL-EN16931-R010", "PEPPOL-EN16931-R020", "PEPPOL-EN16931-R053",
	"PEPPOL-EN16931-P0100", "PEPPOL-EN16931-P0101"}

func (v *validator) peppolRules() {
	r := v.root
	v.check(exists(r, "cbc:ProfileID"), "PEPPOL-EN16931-R001", r, "Business process MUST be provided")
	v.check(exists(r, "cbc:BuyerReference") || exists(r, "cac:OrderReference/cbc:ID"), "PEPPOL-EN16931-R003", r, "A buyer reference or purchase order reference MUST be provided")
	if c := r.Child("cbc:CustomizationID"); c != nil {
		v.check(strings.HasPrefix(c.Value(), PeppolCustomizationID), "PEPPOL-EN16931-R004", c, "Specification identifier MUST have the value '%s'", PeppolCustomizationID)
	} else {
		v.check(false, "PEPPOL-EN16931-R004", r, "Specification identifier MUST have the value '%s'", PeppolCustomizationID)
	}
	if tc := r.Child("cbc:TaxCurrencyCode"); tc != nil {
		v.check(tc.Value() != r.Get("cbc:DocumentCurrencyCode"), "PEPPOL-EN16931-R005", tc, "VAT accounting currency code MUST be different from invoice currency code when provided")
	}
	profile := "Unknown" // the Peppol rules' $profile: NN of billing:NN:1.0
	if m := peppolProfileRE.FindStringSubmatch(r.Get("cbc:ProfileID")); m != nil {
		profile = m[1]
	}
	{
		p := r.Child("cbc:ProfileID")
		v.check(profile != "Unknown", "PEPPOL-EN16931-R007", p, "Business process MUST be in the format 'urn:fdc:peppol.eu:2017:poacc:billing:NN:1.0' where NN indicates the process number")
	}
	empty := false
	var first *Element
	r.Walk(func(e *Element) {
		if anyContent[e.Name] || hasAncestor(e, "ext:ExtensionContent") {
			return
		}
		if len(e.Kids) == 0 && e.Value() == "" && !empty {
			empty, first = true, e
		}
	})
	v.check(!empty, "PEPPOL-EN16931-R008", first, "Document MUST not contain empty elements")
	for _, p := range r.Select(buyerParty) {
		v.check(exists(p, "cbc:EndpointID"), "PEPPOL-EN16931-R010", p, "Buyer electronic address MUST be provided")
	}
	for _, p := range r.Select(sellerParty) {
		v.check(exists(p, "cbc:EndpointID"), "PEPPOL-EN16931-R020", p, "Seller electronic address MUST be provided")
	}
	withSubs := 0
	for _, tt := range r.Children("cac:TaxTotal") {
		if tt.Child("cac:TaxSubtotal") != nil {
			withSubs++
		}
	}
	v.check(withSubs == 1, "PEPPOL-EN16931-R053", r, "Only one tax total with tax subtotals MUST be provided (%d found)", withSubs)
	if c := r.Child("cbc:InvoiceTypeCode"); c != nil {
		v.check(profile != "01" || peppolInvoiceTypes[c.Value()], "PEPPOL-EN16931-P0100", c, "Invoice type code MUST be set according to the profile")
	}
	if c := r.Child("cbc:CreditNoteTypeCode"); c != nil {
		v.check(profile != "01" || peppolCreditNoteTypes[c.Value()], "PEPPOL-EN16931-P0101", c, "Credit note type code MUST be set according to the profile")
	}
}

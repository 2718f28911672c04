package ubl

// EN 16931 core rules (BR-01..BR-65, the BR-CO rules that are not
// calculations, BR-DEC) as the UBL binding of CEN/TC 434 release 1.3.16
// states them (rules/schematron/UBL/EN16931-UBL-model.sch). Each check
// follows its XPath assertion, including how XPath treats a missing value.

const (
	sellerParty = "cac:AccountingSupplierParty/cac:Party"
	buyerParty  = "cac:AccountingCustomerParty/cac:Party"
	vatPred     = "[cac:TaxScheme/cbc:ID=VAT]"
)

// isFalse/isTrue: cbc:ChargeIndicator compared with false()/true().
func isFalse(e *Element) bool { s := e.Get("cbc:ChargeIndicator"); return s == "false" || s == "0" }
func isTrue(e *Element) bool  { s := e.Get("cbc:ChargeIndicator"); return s == "true" || s == "1" }

func nonBlank(e *Element, path string) bool { return e.Get(path) != "" }
func exists(e *Element, path string) bool   { return e.SelectOne(path) != nil }

func (v *validator) coreRules() {
	r := v.root
	v.check(nonBlank(r, "cbc:CustomizationID"), "BR-01", r, "An Invoice shall have a Specification identifier (BT-24)")
	v.check(nonBlank(r, "cbc:ID"), "BR-02", r, "An Invoice shall have an Invoice number (BT-1)")
	v.check(nonBlank(r, "cbc:IssueDate"), "BR-03", r, "An Invoice shall have an Invoice issue date (BT-2)")
	v.check(nonBlank(r, "cbc:InvoiceTypeCode") || nonBlank(r, "cbc:CreditNoteTypeCode"), "BR-04", r, "An Invoice shall have an Invoice type code (BT-3)")
	v.check(nonBlank(r, "cbc:DocumentCurrencyCode"), "BR-05", r, "An Invoice shall have an Invoice currency code (BT-5)")
	v.check(nonBlank(r, sellerParty+"/cac:PartyLegalEntity/cbc:RegistrationName"), "BR-06", r, "An Invoice shall contain the Seller name (BT-27)")
	v.check(nonBlank(r, buyerParty+"/cac:PartyLegalEntity/cbc:RegistrationName"), "BR-07", r, "An Invoice shall contain the Buyer name (BT-44)")
	v.check(exists(r, sellerParty+"/cac:PostalAddress"), "BR-08", r, "An Invoice shall contain the Seller postal address (BG-5)")
	v.check(exists(r, buyerParty+"/cac:PostalAddress"), "BR-10", r, "An Invoice shall contain the Buyer postal address (BG-8)")
	v.check(exists(r, "cac:InvoiceLine") || exists(r, "cac:CreditNoteLine"), "BR-16", r, "An Invoice shall have at least one Invoice line (BG-25)")
	taxCurrencies := map[string]bool{}
	for _, ta := range v.under("cac:TaxTotal", "cbc:TaxAmount") {
		taxCurrencies[ta.Attr("currencyID")] = true
	}
	for _, tc := range r.Children("cbc:TaxCurrencyCode") {
		v.check(taxCurrencies[tc.Text], "BR-53", r, "If the VAT accounting currency code (BT-6) is present, then the Invoice total VAT amount in accounting currency (BT-111) shall be provided")
	}
	taxPoint, descCode := exists(r, "cbc:TaxPointDate"), exists(r, "cac:InvoicePeriod/cbc:DescriptionCode")
	v.check(!(taxPoint && descCode), "BR-CO-03", r, "Value added tax point date (BT-7) and Value added tax point date code (BT-8) are mutually exclusive")
	v.check(exists(r, "cac:TaxTotal/cac:TaxSubtotal"), "BR-CO-18", r, "An Invoice shall at least have one VAT breakdown group (BG-23)")

	for _, e := range v.all("cac:AdditionalDocumentReference") {
		v.check(nonBlank(e, "cbc:ID"), "BR-52", e, "Each Additional supporting document (BG-24) shall contain a Supporting document reference (BT-122)")
	}
	for _, e := range r.Select(buyerParty + "/cbc:EndpointID") {
		v.check(e.HasAttr("schemeID"), "BR-63", e, "The Buyer electronic address (BT-49) shall have a Scheme identifier")
	}
	for _, e := range r.Select(sellerParty + "/cbc:EndpointID") {
		v.check(e.HasAttr("schemeID"), "BR-62", e, "The Seller electronic address (BT-34) shall have a Scheme identifier")
	}
	for _, e := range v.under("cac:Party", "cac:PostalAddress") {
		switch e.Parent.Parent.Name {
		case "cac:AccountingCustomerParty":
			v.check(nonBlank(e, "cac:Country/cbc:IdentificationCode"), "BR-11", e, "The Buyer postal address shall contain a Buyer country code (BT-55)")
		case "cac:AccountingSupplierParty":
			v.check(nonBlank(e, "cac:Country/cbc:IdentificationCode"), "BR-09", e, "The Seller postal address (BG-5) shall contain a Seller country code (BT-40)")
		}
	}
	for _, e := range r.Select("cac:PaymentMeans/cac:CardAccount/cbc:PrimaryAccountNumberID") {
		if len(e.Value()) > 10 {
			v.add("BR-51", Warning, e, "In accordance with card payments security standards an invoice should never include a full card primary account number (BT-87)")
		}
	}
	for _, e := range v.under("cac:DeliveryLocation", "cac:Address") {
		if e.Parent.Parent != nil && e.Parent.Parent.Name == "cac:Delivery" {
			v.check(exists(e, "cac:Country/cbc:IdentificationCode"), "BR-57", e, "Each Deliver to address (BG-15) shall contain a Deliver to country code (BT-80)")
		}
	}
	v.documentAllowanceCharges()
	v.monetaryTotalPresence()
	v.lineRules()
	v.partyRules()
}

func (v *validator) documentAllowanceCharges() {
	for _, ac := range v.root.Children("cac:AllowanceCharge") {
		reason := exists(ac, "cbc:AllowanceChargeReason") || exists(ac, "cbc:AllowanceChargeReasonCode")
		switch {
		case isFalse(ac):
			v.check(exists(ac, "cbc:Amount"), "BR-31", ac, "Each Document level allowance (BG-20) shall have a Document level allowance amount (BT-92)")
			v.check(exists(ac, "cac:TaxCategory"+vatPred+"/cbc:ID"), "BR-32", ac, "Each Document level allowance (BG-20) shall have a Document level allowance VAT category code (BT-95)")
			v.check(reason, "BR-33", ac, "Each Document level allowance (BG-20) shall have a Document level allowance reason (BT-97) or a Document level allowance reason code (BT-98)")
			v.check(reason, "BR-CO-21", ac, "Each Document level allowance (BG-20) shall contain a Document level allowance reason (BT-97) or a Document level allowance reason code (BT-98), or both")
			v.check(fractionDigits(ac.Get("cbc:Amount")) <= 2, "BR-DEC-01", ac, "The allowed maximum number of decimals for the Document level allowance amount (BT-92) is 2")
			v.check(fractionDigits(ac.Get("cbc:BaseAmount")) <= 2, "BR-DEC-02", ac, "The allowed maximum number of decimals for the Document level allowance base amount (BT-93) is 2")
		case isTrue(ac):
			v.check(exists(ac, "cbc:Amount"), "BR-36", ac, "Each Document level charge (BG-21) shall have a Document level charge amount (BT-99)")
			v.check(exists(ac, "cac:TaxCategory"+vatPred+"/cbc:ID"), "BR-37", ac, "Each Document level charge (BG-21) shall have a Document level charge VAT category code (BT-102)")
			v.check(reason, "BR-38", ac, "Each Document level charge (BG-21) shall have a Document level charge reason (BT-104) or a Document level charge reason code (BT-105)")
			v.check(reason, "BR-CO-22", ac, "Each Document level charge (BG-21) shall contain a Document level charge reason (BT-104) or a Document level charge reason code (BT-105), or both")
			v.check(fractionDigits(ac.Get("cbc:Amount")) <= 2, "BR-DEC-05", ac, "The allowed maximum number of decimals for the Document level charge amount (BT-99) is 2")
			v.check(fractionDigits(ac.Get("cbc:BaseAmount")) <= 2, "BR-DEC-06", ac, "The allowed maximum number of decimals for the Document level charge base amount (BT-100) is 2")
		}
	}
}

func (v *validator) monetaryTotalPresence() {
	for _, m := range v.all("cac:LegalMonetaryTotal") {
		v.check(exists(m, "cbc:LineExtensionAmount"), "BR-12", m, "An Invoice shall have the Sum of Invoice line net amount (BT-106)")
		v.check(exists(m, "cbc:TaxExclusiveAmount"), "BR-13", m, "An Invoice shall have the Invoice total amount without VAT (BT-109)")
		v.check(exists(m, "cbc:TaxInclusiveAmount"), "BR-14", m, "An Invoice shall have the Invoice total amount with VAT (BT-112)")
		v.check(exists(m, "cbc:PayableAmount"), "BR-15", m, "An Invoice shall have the Amount due for payment (BT-115)")
		for _, d := range []struct{ rule, path, bt string }{
			{"BR-DEC-09", "cbc:LineExtensionAmount", "BT-106"}, {"BR-DEC-10", "cbc:AllowanceTotalAmount", "BT-107"},
			{"BR-DEC-11", "cbc:ChargeTotalAmount", "BT-108"}, {"BR-DEC-12", "cbc:TaxExclusiveAmount", "BT-109"},
			{"BR-DEC-14", "cbc:TaxInclusiveAmount", "BT-112"}, {"BR-DEC-16", "cbc:PrepaidAmount", "BT-113"},
			{"BR-DEC-17", "cbc:PayableRoundingAmount", "BT-114"}, {"BR-DEC-18", "cbc:PayableAmount", "BT-115"},
		} {
			v.check(fractionDigits(m.Get(d.path)) <= 2, d.rule, m, "The allowed maximum number of decimals for %s is 2", d.bt)
		}
	}
}

func (v *validator) lineRules() {
	for _, l := range v.lines() {
		v.check(nonBlank(l, "cbc:ID"), "BR-21", l, "Each Invoice line (BG-25) shall have an Invoice line identifier (BT-126)")
		q := l.SelectOne("cbc:InvoicedQuantity|cbc:CreditedQuantity")
		v.check(q != nil, "BR-22", l, "Each Invoice line (BG-25) shall have an Invoiced quantity (BT-129)")
		v.check(q != nil && q.HasAttr("unitCode"), "BR-23", l, "An Invoice line (BG-25) shall have an Invoiced quantity unit of measure code (BT-130)")
		v.check(exists(l, "cbc:LineExtensionAmount"), "BR-24", l, "Each Invoice line (BG-25) shall have an Invoice line net amount (BT-131)")
		v.check(nonBlank(l, "cac:Item/cbc:Name"), "BR-25", l, "Each Invoice line (BG-25) shall contain the Item name (BT-153)")
		v.check(exists(l, "cac:Price/cbc:PriceAmount"), "BR-26", l, "Each Invoice line (BG-25) shall contain the Item net price (BT-146)")
		p, ok := decimal(l.SelectOne("cac:Price/cbc:PriceAmount"))
		v.check(ok && p.Sign() >= 0, "BR-27", l, "The Item net price (BT-146) shall NOT be negative")
		if b := l.SelectOne("cac:Price/cac:AllowanceCharge/cbc:BaseAmount"); b != nil {
			x, ok := decimal(b)
			v.check(ok && x.Sign() >= 0, "BR-28", l, "The Item gross price (BT-148) shall NOT be negative")
		}
		v.check(exists(l, "cac:Item/cac:ClassifiedTaxCategory"+vatPred+"/cbc:ID"), "BR-CO-04", l, "Each Invoice line (BG-25) shall be categorized with an Invoiced item VAT category code (BT-151)")
		v.check(fractionDigits(l.Get("cbc:LineExtensionAmount")) <= 2, "BR-DEC-23", l, "The allowed maximum number of decimals for the Invoice line net amount (BT-131) is 2")
		for _, ac := range l.Children("cac:AllowanceCharge") {
			reason := exists(ac, "cbc:AllowanceChargeReason") || exists(ac, "cbc:AllowanceChargeReasonCode")
			switch {
			case isFalse(ac):
				v.check(exists(ac, "cbc:Amount"), "BR-41", ac, "Each Invoice line allowance (BG-27) shall have an Invoice line allowance amount (BT-136)")
				v.check(reason, "BR-42", ac, "Each Invoice line allowance (BG-27) shall have an Invoice line allowance reason (BT-139) or an Invoice line allowance reason code (BT-140)")
				v.check(reason, "BR-CO-23", ac, "Each Invoice line allowance (BG-27) shall contain an Invoice line allowance reason (BT-139) or an Invoice line allowance reason code (BT-140), or both")
				v.check(fractionDigits(ac.Get("cbc:Amount")) <= 2, "BR-DEC-24", ac, "The allowed maximum number of decimals for the Invoice line allowance amount (BT-136) is 2")
				v.check(fractionDigits(ac.Get("cbc:BaseAmount")) <= 2, "BR-DEC-25", ac, "The allowed maximum number of decimals for the Invoice line allowance base amount (BT-137) is 2")
			case isTrue(ac):
				v.check(exists(ac, "cbc:Amount"), "BR-43", ac, "Each Invoice line charge (BG-28) shall have an Invoice line charge amount (BT-141)")
				v.check(reason, "BR-44", ac, "Each Invoice line charge shall have an Invoice line charge reason or an invoice line allowance reason code")
				v.check(reason, "BR-CO-24", ac, "Each Invoice line charge (BG-28) shall contain an Invoice line charge reason (BT-144) or an Invoice line charge reason code (BT-145), or both")
				v.check(fractionDigits(ac.Get("cbc:Amount")) <= 2, "BR-DEC-27", ac, "The allowed maximum number of decimals for the Invoice line charge amount (BT-141) is 2")
				v.check(fractionDigits(ac.Get("cbc:BaseAmount")) <= 2, "BR-DEC-28", ac, "The allowed maximum number of decimals for the Invoice line charge base amount (BT-142) is 2")
			}
		}
		for _, e := range l.Select("cac:Item/cac:CommodityClassification/cbc:ItemClassificationCode") {
			v.check(e.HasAttr("listID"), "BR-65", e, "The Item classification identifier (BT-158) shall have a Scheme identifier")
		}
		for _, e := range l.Select("cac:Item/cac:StandardItemIdentification/cbc:ID") {
			v.check(e.HasAttr("schemeID"), "BR-64", e, "The Item standard identifier (BT-157) shall have a Scheme identifier")
		}
	}
	for _, p := range v.all("cac:InvoicePeriod") {
		start, okS := p.Get("cbc:StartDate"), exists(p, "cbc:StartDate")
		end, okE := p.Get("cbc:EndDate"), exists(p, "cbc:EndDate")
		ordered := !okS || !okE || isDate(start) && isDate(end) && end[:10] >= start[:10]
		if par := p.Parent.Name; par == "cac:InvoiceLine" || par == "cac:CreditNoteLine" {
			v.check(ordered, "BR-30", p, "If both Invoice line period start date (BT-134) and Invoice line period end date (BT-135) are given then the end date shall be later or equal to the start date")
			v.check(okS || okE, "BR-CO-20", p, "If Invoice line period (BG-26) is used, the Invoice line period start date (BT-134) or the Invoice line period end date (BT-135) shall be filled, or both")
			continue
		}
		v.check(ordered, "BR-29", p, "If both Invoicing period start date (BT-73) and Invoicing period end date (BT-74) are given then the end date shall be later or equal to the start date")
		v.check(okS || okE || exists(p, "cbc:DescriptionCode"), "BR-CO-19", p, "If Invoicing period (BG-14) is used, the Invoicing period start date (BT-73) or the Invoicing period end date (BT-74) shall be filled, or both")
	}
	for _, e := range v.all("cac:AdditionalItemProperty") {
		v.check(exists(e, "cbc:Name") && exists(e, "cbc:Value"), "BR-54", e, "Each Item attribute (BG-32) shall contain an Item attribute name (BT-160) and an Item attribute value (BT-161)")
	}
}

func (v *validator) partyRules() {
	r := v.root
	sellerNames, sellerIDs := r.Select(sellerParty+"/cac:PartyName/cbc:Name"), r.Select(sellerParty+"/cac:PartyIdentification/cbc:ID")
	for _, p := range v.all("cac:PayeeParty") {
		sameName := exists(p, "cac:PartyName/cbc:Name") && anyEqual(p.Select("cac:PartyName/cbc:Name"), sellerNames)
		sameID := anyEqual(p.Select("cac:PartyIdentification/cbc:ID"), sellerIDs)
		v.check(exists(p, "cac:PartyName/cbc:Name") && !sameName && !sameID, "BR-17", p, "The Payee name (BT-59) shall be provided in the Invoice, if the Payee (BG-10) is different from the Seller (BG-4)")
	}
	for _, pm := range v.all("cac:PaymentMeans") {
		code := pm.Get("cbc:PaymentMeansCode")
		v.check(exists(pm, "cbc:PaymentMeansCode"), "BR-49", pm, "A Payment instruction (BG-16) shall specify the Payment means type code (BT-81)")
		credit := code == "30" || code == "58"
		v.check(!credit || exists(pm, "cac:PayeeFinancialAccount/cbc:ID"), "BR-61", pm, "If the Payment means type code (BT-81) means SEPA credit transfer, Local credit transfer or Non-SEPA international credit transfer, the Payment account identifier (BT-84) shall be present")
		if anyCode(pm.Children("cbc:PaymentMeansCode"), "30", "58") {
			for _, a := range pm.Children("cac:PayeeFinancialAccount") {
				v.check(nonBlank(a, "cbc:ID"), "BR-50", a, "A Payment account identifier (BT-84) shall be present if Credit transfer (BG-17) information is provided in the Invoice")
			}
		}
	}
	for _, b := range v.all("cac:BillingReference") {
		v.check(exists(b, "cac:InvoiceDocumentReference/cbc:ID"), "BR-55", b, "Each Preceding Invoice reference (BG-3) shall contain a Preceding Invoice reference (BT-25)")
	}
	for _, s := range v.all("cac:AccountingSupplierParty") {
		ok := exists(s, "cac:Party/cac:PartyTaxScheme"+vatPred+"/cbc:CompanyID") || exists(s, "cac:Party/cac:PartyLegalEntity/cbc:CompanyID")
		for _, id := range s.Select("cac:Party/cac:PartyIdentification/cbc:ID") {
			if id.Attr("schemeID") != "SEPA" {
				ok = true
			}
		}
		v.check(ok, "BR-CO-26", s, "In order for the buyer to automatically identify a supplier, the Seller identifier (BT-29), the Seller legal registration identifier (BT-30) and/or the Seller VAT identifier (BT-31) shall be present")
	}
	for _, t := range v.all("cac:TaxRepresentativeParty") {
		v.check(nonBlank(t, "cac:PartyName/cbc:Name"), "BR-18", t, "The Seller tax representative name (BT-62) shall be provided in the Invoice, if the Seller (BG-4) has a Seller tax representative party (BG-11)")
		v.check(exists(t, "cac:PostalAddress"), "BR-19", t, "The Seller tax representative postal address (BG-12) shall be provided in the Invoice, if the Seller (BG-4) has a Seller tax representative party (BG-11)")
		v.check(exists(t, "cac:PartyTaxScheme"+vatPred+"/cbc:CompanyID"), "BR-56", t, "Each Seller tax representative party (BG-11) shall have a Seller tax representative VAT identifier (BT-63)")
		for _, a := range t.Children("cac:PostalAddress") {
			v.check(nonBlank(a, "cac:Country/cbc:IdentificationCode"), "BR-20", a, "The Seller tax representative postal address (BG-12) shall contain a Tax representative country code (BT-69)")
		}
	}
	for _, st := range v.under("cac:TaxTotal", "cac:TaxSubtotal") {
		v.check(exists(st, "cbc:TaxableAmount"), "BR-45", st, "Each VAT breakdown (BG-23) shall have a VAT category taxable amount (BT-116)")
		v.check(exists(st, "cbc:TaxAmount"), "BR-46", st, "Each VAT breakdown (BG-23) shall have a VAT category tax amount (BT-117)")
		v.check(exists(st, "cac:TaxCategory"+vatPred+"/cbc:ID"), "BR-47", st, "Each VAT breakdown (BG-23) shall be defined through a VAT category code (BT-118)")
		v.check(exists(st, "cac:TaxCategory"+vatPred+"/cbc:Percent") || st.Get("cac:TaxCategory"+vatPred+"/cbc:ID") == "O", "BR-48", st, "Each VAT breakdown (BG-23) shall have a VAT category rate (BT-119), except if the Invoice is not subject to VAT")
		v.check(fractionDigits(st.Get("cbc:TaxableAmount")) <= 2, "BR-DEC-19", st, "The allowed maximum number of decimals for the VAT category taxable amount (BT-116) is 2")
		v.check(fractionDigits(st.Get("cbc:TaxAmount")) <= 2, "BR-DEC-20", st, "The allowed maximum number of decimals for the VAT category tax amount (BT-117) is 2")
	}
}

// anyEqual is XPath's general comparison a = b on normalized values, in
// linear time.
func anyEqual(a, b []*Element) bool {
	in := make(map[string]bool, len(b))
	for _, y := range b {
		in[y.Value()] = true
	}
	for _, x := range a {
		if in[x.Value()] {
			return true
		}
	}
	return false
}

func anyCode(es []*Element, codes ...string) bool {
	for _, e := range es {
		for _, c := range codes {
			if e.Value() == c {
				return true
			}
		}
	}
	return false
}

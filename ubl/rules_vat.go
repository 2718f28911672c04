package ubl

import "math/big"

// VAT category rules of EN 16931 for the categories S (standard rate),
// Z (zero rated), E (exempt), AE (reverse charge), K (intra-community
// supply, BR-IC), G (export outside the EU) and O (not subject to VAT).
// Each family has the same shape: -01 one VAT breakdown per category used,
// -02..-04 the identifiers the seller (and buyer) must have, -05..-07 the
// rate on lines, allowances and charges, -08 the taxable amount of the
// breakdown, -09 its VAT, -10 the exemption reason. The categories L and M
// (Canary Islands IGIC, Ceuta and Melilla IPSI) are not implemented.

type vatCategory struct {
	code, prefix string
	ids          func(v *validator) bool // the -02..-04 identifier condition
	rate         func(p *big.Rat, present bool) bool
	rateText     string
	exemption    bool // -10: an exemption reason is required (true) or forbidden (false)
}

func (v *validator) sellerVATAny() bool {
	for _, s := range v.all("cac:AccountingSupplierParty") {
		if exists(s, "cac:Party/cac:PartyTaxScheme/cbc:CompanyID") {
			return true
		}
	}
	return v.taxRepVAT()
}

func (v *validator) sellerVAT() bool {
	for _, s := range v.all("cac:AccountingSupplierParty") {
		if exists(s, "cac:Party/cac:PartyTaxScheme"+vatPred+"/cbc:CompanyID") {
			return true
		}
	}
	return false
}

func (v *validator) taxRepVAT() bool {
	for _, t := range v.all("cac:TaxRepresentativeParty") {
		if exists(t, "cac:PartyTaxScheme"+vatPred+"/cbc:CompanyID") {
			return true
		}
	}
	return false
}

func (v *validator) buyerVAT() bool {
	for _, b := range v.all("cac:AccountingCustomerParty") {
		if exists(b, "cac:Party/cac:PartyTaxScheme"+vatPred+"/cbc:CompanyID") {
			return true
		}
	}
	return false
}

func (v *validator) buyerLegal() bool {
	for _, b := range v.all("cac:AccountingCustomerParty") {
		if exists(b, "cac:Party/cac:PartyLegalEntity/cbc:CompanyID") {
			return true
		}
	}
	return false
}

func zeroRate(p *big.Rat, present bool) bool { return present && p.Sign() == 0 }

var vatCategories = []vatCategory{
	{"S", "BR-S", (*validator).sellerVATAny, func(p *big.Rat, ok bool) bool { return ok && p.Sign() > 0 }, "greater than zero", false},
	{"Z", "BR-Z", (*validator).sellerVATAny, zeroRate, "0", false},
	{"E", "BR-E", (*validator).sellerVATAny, zeroRate, "0", true},
	{"AE", "BR-AE", func(v *validator) bool { return v.sellerVATAny() && (v.buyerVAT() || v.buyerLegal()) }, zeroRate, "0", true},
	{"K", "BR-IC", func(v *validator) bool { return (v.sellerVAT() || v.taxRepVAT()) && v.buyerVAT() }, zeroRate, "0", true},
	{"G", "BR-G", func(v *validator) bool { return v.sellerVAT() || v.taxRepVAT() }, zeroRate, "0", true},
	{"O", "BR-O", func(v *validator) bool { return !v.sellerVAT() && !v.taxRepVAT() && !v.buyerVAT() }, func(_ *big.Rat, ok bool) bool { return !ok }, "absent", true},
}

// isVATCategory: a TaxCategory or ClassifiedTaxCategory of the VAT scheme with code.
func isVATCategory(c *Element, code string) bool {
	return c.Get("cbc:ID") == code && c.matches("cac:TaxScheme/cbc:ID=VAT")
}

func (v *validator) vatRules() {
	r := v.root
	var subtotalCats []*Element // root TaxTotal/TaxSubtotal/TaxCategory[VAT]
	for _, c := range r.Select("cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory" + vatPred) {
		subtotalCats = append(subtotalCats, c)
	}
	acCats := v.under("cac:AllowanceCharge", "cac:TaxCategory") // any level
	lineCats := []*Element{}
	for _, l := range v.lines() {
		lineCats = append(lineCats, l.Select("cac:Item/cac:ClassifiedTaxCategory")...)
	}
	allCats := append(append([]*Element{}, v.all("cac:TaxCategory")...), v.all("cac:ClassifiedTaxCategory")...)
	for _, cat := range vatCategories {
		c, p := cat.code, cat.prefix
		// -01
		if c == "S" {
			used := 0
			for _, x := range acCats {
				if x.Get("cbc:ID") == "S" {
					used++
				}
			}
			for _, x := range v.all("cac:ClassifiedTaxCategory") {
				if x.Get("cbc:ID") == "S" {
					used++
				}
			}
			n := 0
			for _, x := range r.Select("cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory") {
				if x.Get("cbc:ID") == "S" {
					n++
				}
			}
			v.check(used > 0 && n > 0 || used == 0 && n == 0, "BR-S-01", r, "An Invoice with a line, allowance or charge of VAT category Standard rated shall have at least one VAT breakdown (BG-23) with that category code")
		} else {
			used := false
			for _, x := range allCats {
				if isVATCategory(x, c) {
					used = true
				}
			}
			n := 0
			for _, x := range subtotalCats {
				if x.Get("cbc:ID") == c {
					n++
				}
			}
			v.check(!used || n == 1, p+"-01", r, "An Invoice that contains a line, allowance or charge of VAT category %s shall contain exactly one VAT breakdown (BG-23) with that category (%d found)", c, n)
		}
		// -02..-04
		lineUse, allowUse, chargeUse := false, false, false
		for _, x := range v.all("cac:ClassifiedTaxCategory") {
			if isVATCategory(x, c) {
				lineUse = true
			}
		}
		for _, x := range acCats {
			if !isVATCategory(x, c) || c == "O" && x.Parent.Parent != r {
				continue
			}
			if isFalse(x.Parent) {
				allowUse = true
			} else if isTrue(x.Parent) {
				chargeUse = true
			}
		}
		ids := true
		if lineUse || allowUse || chargeUse {
			ids = cat.ids(v)
		}
		v.check(!lineUse || ids, p+"-02", r, "The seller, tax representative and buyer identifiers required for VAT category %s on an Invoice line are missing or not allowed", c)
		v.check(!allowUse || ids, p+"-03", r, "The seller, tax representative and buyer identifiers required for VAT category %s on a Document level allowance are missing or not allowed", c)
		v.check(!chargeUse || ids, p+"-04", r, "The seller, tax representative and buyer identifiers required for VAT category %s on a Document level charge are missing or not allowed", c)
		// -05..-07
		for _, x := range lineCats {
			if isVATCategory(x, c) {
				pr, ok := decimal(x.Child("cbc:Percent"))
				v.check(cat.rate(pr, ok), p+"-05", x, "In an Invoice line of VAT category %s the Invoiced item VAT rate (BT-152) shall be %s", c, cat.rateText)
			}
		}
		for _, x := range acCats {
			if !isVATCategory(x, c) {
				continue
			}
			pr, ok := decimal(x.Child("cbc:Percent"))
			if isFalse(x.Parent) {
				v.check(cat.rate(pr, ok), p+"-06", x, "In a Document level allowance of VAT category %s the VAT rate (BT-96) shall be %s", c, cat.rateText)
			} else if isTrue(x.Parent) {
				v.check(cat.rate(pr, ok), p+"-07", x, "In a Document level charge of VAT category %s the VAT rate (BT-103) shall be %s", c, cat.rateText)
			}
		}
		// -08..-10 on the breakdown
		for _, x := range subtotalCats {
			if x.Get("cbc:ID") != c {
				continue
			}
			st := x.Parent
			tb, tbOK := decimal(st.Child("cbc:TaxableAmount"))
			ta, taOK := decimal(st.Child("cbc:TaxAmount"))
			if c == "S" {
				v.standardRated(x, tb, tbOK, ta, taOK)
			} else {
				sum := v.categorySum(c, nil)
				v.check(tbOK && eq(tb, sum), p+"-08", x, "The VAT category taxable amount (BT-116) of VAT category %s shall equal the sum of the line net amounts plus charges minus allowances of that category (%s)", c, fmtRat(sum))
				v.check(taOK && ta.Sign() == 0, p+"-09", x, "The VAT category tax amount (BT-117) of VAT category %s shall be 0", c)
			}
			reason := exists(x, "cbc:TaxExemptionReason") || exists(x, "cbc:TaxExemptionReasonCode")
			if cat.exemption {
				v.check(reason, p+"-10", x, "A VAT breakdown (BG-23) of VAT category %s shall have a VAT exemption reason code (BT-121) or text (BT-120)", c)
			} else {
				v.check(!reason, p+"-10", x, "A VAT breakdown (BG-23) of VAT category %s shall not have a VAT exemption reason code (BT-121) or text (BT-120)", c)
			}
		}
	}
	v.notSubjectToVAT(subtotalCats, acCats)
	v.intraCommunity(subtotalCats)
}

// categorySum is Σ line net amounts + Σ document charges - Σ document
// allowances of category code (and rate, if rate is not nil). All sums are
// computed in one pass on the first call: a breakdown per line must not make
// validation quadratic.
func (v *validator) categorySum(code string, rate *big.Rat) *big.Rat {
	if v.sums == nil {
		v.sums = map[string]*big.Rat{}
		addTo := func(c *Element, amount *big.Rat) {
			if c == nil {
				return
			}
			keys := []string{c.Get("cbc:ID") + "|*"}
			if p, ok := decimal(c.Child("cbc:Percent")); ok {
				keys = append(keys, c.Get("cbc:ID")+"|"+p.RatString())
			}
			for _, k := range keys {
				if v.sums[k] == nil {
					v.sums[k] = rat(0)
				}
				v.sums[k] = add(v.sums[k], amount)
			}
		}
		for _, l := range v.lines() {
			if a, ok := decimal(l.Child("cbc:LineExtensionAmount")); ok {
				addTo(l.SelectOne("cac:Item/cac:ClassifiedTaxCategory"), a)
			}
		}
		for _, ac := range v.root.Children("cac:AllowanceCharge") {
			a, ok := decimal(ac.Child("cbc:Amount"))
			switch {
			case !ok:
			case isTrue(ac):
				addTo(ac.Child("cac:TaxCategory"), a)
			case isFalse(ac):
				addTo(ac.Child("cac:TaxCategory"), new(big.Rat).Neg(a))
			}
		}
	}
	key := code + "|*"
	if rate != nil {
		key = code + "|" + rate.RatString()
	}
	if s := v.sums[key]; s != nil {
		return s
	}
	return rat(0)
}

// standardRates is the set of rates (RatString) that lines and allowances
// or charges at any level use with category S, computed once.
func (v *validator) standardRates() map[string]bool {
	if v.sRates != nil {
		return v.sRates
	}
	v.sRates = map[string]bool{}
	note := func(c *Element) {
		if r, ok := decimal(c.Child("cbc:Percent")); ok && c.Get("cbc:ID") == "S" {
			v.sRates[r.RatString()] = true
		}
	}
	for _, l := range v.lines() {
		note(l.SelectOne("cac:Item/cac:ClassifiedTaxCategory"))
	}
	for _, ac := range v.all("cac:AllowanceCharge") {
		note(ac.Child("cac:TaxCategory"))
	}
	return v.sRates
}

// standardRated is BR-S-08 and BR-S-09: per rate, the taxable amount within
// one unit of the lines, charges and allowances at that rate; the VAT within
// one unit of taxable amount x rate.
func (v *validator) standardRated(cat *Element, tb *big.Rat, tbOK bool, ta *big.Rat, taOK bool) {
	pEl := cat.Child("cbc:Percent")
	if pEl == nil {
		v.check(false, "BR-S-09", cat, "The VAT category tax amount (BT-117) of VAT category S shall equal the taxable amount x the rate")
		return
	}
	p, pOK := decimal(pEl)
	if !pOK {
		return
	}
	used := v.standardRates()[p.RatString()]
	sum := v.categorySum("S", p)
	within := tbOK && sub(tb, rat(1)).Cmp(sum) < 0 && add(tb, rat(1)).Cmp(sum) > 0
	v.check(used && within, "BR-S-08", cat, "For each VAT rate (BT-119) of category S the taxable amount (BT-116) shall equal the sum of the line net amounts plus charges minus allowances at that rate (%s)", fmtRat(sum))
	ok := false
	if tbOK && taOK {
		calc := round2(mul(abs(tb), new(big.Rat).Quo(p, rat(100))))
		ok = sub(abs(ta), rat(1)).Cmp(calc) < 0 && add(abs(ta), rat(1)).Cmp(calc) > 0
	}
	v.check(ok, "BR-S-09", cat, "The VAT category tax amount (BT-117) of VAT category S shall equal the taxable amount (BT-116) x the rate (BT-119), rounded to two decimals")
}

func (v *validator) notSubjectToVAT(subtotalCats, acCats []*Element) {
	hasO := false
	for _, x := range subtotalCats {
		if x.Get("cbc:ID") == "O" {
			hasO = true
		}
	}
	if !hasO {
		return
	}
	r := v.root
	others := 0
	for _, x := range subtotalCats {
		if x.Get("cbc:ID") != "O" {
			others++
		}
	}
	v.check(others == 0, "BR-O-11", r, "An Invoice with a VAT breakdown of category Not subject to VAT shall not contain other VAT breakdowns")
	lineOthers := 0
	for _, x := range v.all("cac:ClassifiedTaxCategory") {
		if x.Get("cbc:ID") != "O" && x.matches("cac:TaxScheme/cbc:ID=VAT") {
			lineOthers++
		}
	}
	v.check(lineOthers == 0, "BR-O-12", r, "An Invoice with a VAT breakdown of category Not subject to VAT shall not contain an Invoice line with another VAT category")
	allowOthers, chargeOthers := 0, 0
	for _, x := range acCats {
		if x.Get("cbc:ID") == "O" || !x.matches("cac:TaxScheme/cbc:ID=VAT") {
			continue
		}
		if isFalse(x.Parent) {
			allowOthers++
		} else if isTrue(x.Parent) {
			chargeOthers++
		}
	}
	v.check(allowOthers == 0, "BR-O-13", r, "An Invoice with a VAT breakdown of category Not subject to VAT shall not contain Document level allowances with another VAT category")
	v.check(chargeOthers == 0, "BR-O-14", r, "An Invoice with a VAT breakdown of category Not subject to VAT shall not contain Document level charges with another VAT category")
}

func (v *validator) intraCommunity(subtotalCats []*Element) {
	hasK := false
	for _, x := range subtotalCats {
		if x.Get("cbc:ID") == "K" {
			hasK = true
		}
	}
	if !hasK {
		return
	}
	r := v.root
	period := false
	for _, p := range r.Children("cac:InvoicePeriod") {
		if len(p.Kids) > 0 {
			period = true
		}
	}
	v.check(len(r.Get("cac:Delivery/cbc:ActualDeliveryDate")) > 1 || period, "BR-IC-11", r, "In an Invoice with a VAT breakdown of category Intra-community supply the Actual delivery date (BT-72) or the Invoicing period (BG-14) shall not be blank")
	v.check(len(r.Get("cac:Delivery/cac:DeliveryLocation/cac:Address/cac:Country/cbc:IdentificationCode")) > 1, "BR-IC-12", r, "In an Invoice with a VAT breakdown of category Intra-community supply the Deliver to country code (BT-80) shall not be blank")
}

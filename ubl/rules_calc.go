package ubl

import "math/big"

// EN 16931 calculation rules (BR-CO-10..BR-CO-17) as the UBL binding states
// them: sums are exact decimals, a total is compared with the sum rounded to
// two decimals (round(x * 10 * 10) div 100, halves up), the VAT of a
// breakdown within one unit of its rounded computed value. A missing amount
// fails the comparison, as xs:decimal of an empty sequence does.

func (v *validator) calculationRules() {
	r := v.root
	lines := v.lines()
	docAllowances, docCharges := []*Element{}, []*Element{}
	for _, ac := range r.Children("cac:AllowanceCharge") {
		if isFalse(ac) {
			docAllowances = append(docAllowances, ac)
		} else if isTrue(ac) {
			docCharges = append(docCharges, ac)
		}
	}
	for _, m := range v.all("cac:LegalMonetaryTotal") {
		lineSum := round2(sumOf(lines, "cbc:LineExtensionAmount"))
		lea, ok := decimal(m.Child("cbc:LineExtensionAmount"))
		v.check(ok && eq(lea, lineSum), "BR-CO-10", m, "Sum of Invoice line net amount (BT-106) = Σ Invoice line net amount (BT-131): %s is given, the lines add up to %s", m.Get("cbc:LineExtensionAmount"), fmtRat(lineSum))

		at, atOK := decimal(m.Child("cbc:AllowanceTotalAmount"))
		atSum := round2(sumOf(docAllowances, "cbc:Amount"))
		v.check(atOK && eq(at, atSum) || !exists(m, "cbc:AllowanceTotalAmount") && len(docAllowances) == 0, "BR-CO-11", m, "Sum of allowances on document level (BT-107) = Σ Document level allowance amount (BT-92): the allowances add up to %s", fmtRat(atSum))
		ct, ctOK := decimal(m.Child("cbc:ChargeTotalAmount"))
		ctSum := round2(sumOf(docCharges, "cbc:Amount"))
		v.check(ctOK && eq(ct, ctSum) || !exists(m, "cbc:ChargeTotalAmount") && len(docCharges) == 0, "BR-CO-12", m, "Sum of charges on document level (BT-108) = Σ Document level charge amount (BT-99): the charges add up to %s", fmtRat(ctSum))

		te, teOK := decimal(m.Child("cbc:TaxExclusiveAmount"))
		hasC, hasA := exists(m, "cbc:ChargeTotalAmount"), exists(m, "cbc:AllowanceTotalAmount")
		var want *big.Rat
		ok13 := teOK && lea != nil
		if ok13 {
			x := lea
			if hasC {
				ok13 = ok13 && ctOK
				if ctOK {
					x = add(x, ct)
				}
			}
			if hasA {
				ok13 = ok13 && atOK
				if atOK {
					x = sub(x, at)
				}
			}
			want = x
			if hasA || hasC {
				want = round2(x)
			}
			ok13 = ok13 && eq(te, want)
		}
		v.check(ok13, "BR-CO-13", m, "Invoice total amount without VAT (BT-109) = Σ Invoice line net amount (BT-131) - Sum of allowances on document level (BT-107) + Sum of charges on document level (BT-108)")

		ti, tiOK := decimal(m.Child("cbc:TaxInclusiveAmount"))
		pa, paOK := decimal(m.Child("cbc:PayableAmount"))
		pre, preOK := decimal(m.Child("cbc:PrepaidAmount"))
		rnd, rndOK := decimal(m.Child("cbc:PayableRoundingAmount"))
		hasPre, hasRnd := exists(m, "cbc:PrepaidAmount"), exists(m, "cbc:PayableRoundingAmount")
		ok16 := false
		switch {
		case !tiOK || !paOK || hasPre && !preOK || hasRnd && !rndOK:
		case hasPre && !hasRnd:
			ok16 = eq(pa, round2(sub(ti, pre)))
		case !hasPre && !hasRnd:
			ok16 = eq(pa, ti)
		case hasPre && hasRnd:
			ok16 = eq(round2(sub(pa, rnd)), round2(sub(ti, pre)))
		default:
			ok16 = eq(round2(sub(pa, rnd)), ti)
		}
		v.check(ok16, "BR-CO-16", m, "Amount due for payment (BT-115) = Invoice total amount with VAT (BT-112) - Paid amount (BT-113) + Rounding amount (BT-114): %s is given", m.Get("cbc:PayableAmount"))
	}

	for _, tt := range r.Children("cac:TaxTotal") {
		subs := tt.Children("cac:TaxSubtotal")
		if len(subs) == 0 {
			continue
		}
		ta, ok := decimal(tt.Child("cbc:TaxAmount"))
		s := round2(sumOf(subs, "cbc:TaxAmount"))
		v.check(ok && eq(ta, s), "BR-CO-14", tt, "Invoice total VAT amount (BT-110) = Σ VAT category tax amount (BT-117): the breakdown adds up to %s", fmtRat(s))
	}

	if cur := r.Child("cbc:DocumentCurrencyCode"); cur != nil {
		var inCur []*Element
		for _, ta := range r.Select("cac:TaxTotal/cbc:TaxAmount") {
			if ta.Attr("currencyID") == cur.Text {
				inCur = append(inCur, ta)
			}
		}
		ok := len(inCur) == 1
		if ok {
			ti, okI := decimal(r.SelectOne("cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount"))
			te, okE := decimal(r.SelectOne("cac:LegalMonetaryTotal/cbc:TaxExclusiveAmount"))
			ta, okT := decimal(inCur[0])
			ok = okI && okE && okT && eq(ti, round2(add(te, ta)))
		}
		v.check(ok, "BR-CO-15", r, "Invoice total amount with VAT (BT-112) = Invoice total amount without VAT (BT-109) + Invoice total VAT amount (BT-110), with exactly one TaxTotal/TaxAmount in the document currency (%d found)", len(inCur))
	}

	for _, st := range v.under("cac:TaxTotal", "cac:TaxSubtotal") {
		cat := st.SelectOne("cac:TaxCategory" + vatPred)
		ta, taOK := decimal(st.Child("cbc:TaxAmount"))
		tb, tbOK := decimal(st.Child("cbc:TaxableAmount"))
		p, pOK := decimal(cat.Child("cbc:Percent"))
		ok := false
		switch {
		case !pOK:
			ok = taOK && round(ta).Sign() == 0
		case round(p).Sign() == 0:
			ok = taOK && round(ta).Sign() == 0
		default:
			if taOK && tbOK {
				calc := round2(mul(abs(tb), new(big.Rat).Quo(p, rat(100))))
				ok = sub(abs(ta), rat(1)).Cmp(calc) < 0 && add(abs(ta), rat(1)).Cmp(calc) > 0
			}
		}
		v.check(ok, "BR-CO-17", st, "VAT category tax amount (BT-117) = VAT category taxable amount (BT-116) x (VAT category rate (BT-119) / 100), rounded to two decimals (within one unit)")
	}
}

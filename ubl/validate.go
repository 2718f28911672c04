package ubl

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// Severity of a finding, as the rule sets flag their assertions.
type Severity string

const (
	Fatal   Severity = "fatal"   // the document must be rejected
	Warning Severity = "warning" // reported, the document is accepted
)

// Finding is one failed assertion: the rule id of the published rule set
// (BR-*, BR-CO-*, BR-S-*..., BR-CL-*, UBL-SR-*, UBL-DT-*, PEPPOL-*), or XSD for
// the UBL 2.1 schema, with the element it concerns.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	XPath    string   `json:"xpath"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Message  string   `json:"message"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s at %s (line %d, column %d): %s", f.Severity, f.Rule, f.XPath, f.Line, f.Column, f.Message)
}

// Strictness says which findings reject a document.
type Strictness string

const (
	// Strict: every finding keeps the severity its rule set gives it.
	Strict Strictness = "strict"
	// Lenient: code list findings (BR-CL-*) become warnings; the schema,
	// core, calculation and VAT rules stay fatal.
	Lenient Strictness = "lenient"
	// Off: no validation (the guard and the parser still run).
	Off Strictness = "off"
)

// DefaultStrictness is strict: the EN 16931 code lists are normative, and a
// receiver that accepts what the official validator rejects has to send it
// back later by other means.
const DefaultStrictness = Strict

// ParseStrictness reads a strictness name ("" is the default).
func ParseStrictness(s string) (Strictness, error) {
	switch Strictness(s) {
	case "":
		return DefaultStrictness, nil
	case Strict, Lenient, Off:
		return Strictness(s), nil
	}
	return "", fmt.Errorf("strictness %q: want strict, lenient or off", s)
}

// Profiles: which rule sets run on top of the schema and EN 16931.
const (
	ProfileEN16931 = "en16931" // the default: UBL 2.1 schema and EN 16931 (CEN/TC 434 1.3.16)
	ProfilePeppol  = "peppol"  // also Peppol BIS Billing 3.0 (the subset in rules_peppol.go)
)

// Options of Validate; nil means the defaults.
type Options struct {
	Strictness Strictness
	Profile    string
}

// Validate checks the document against the UBL 2.1 schema tables, the
// EN 16931 rules this package implements (NotImplemented lists the others)
// and, with ProfilePeppol, the Peppol BIS 3 subset. Findings come in
// document order, then by rule id.
func (d *Document) Validate(opts *Options) []Finding {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Strictness == "" {
		o.Strictness = DefaultStrictness
	}
	if o.Strictness == Off {
		return nil
	}
	v := newValidator(d)
	v.checkSchema(d.Root)
	v.coreRules()
	v.calculationRules()
	v.vatRules()
	v.codeListRules()
	v.syntaxRules()
	if o.Profile == ProfilePeppol {
		v.peppolRules()
	}
	if o.Strictness == Lenient {
		for i := range v.out {
			if strings.HasPrefix(v.out[i].Rule, "BR-CL-") {
				v.out[i].Severity = Warning
			}
		}
	}
	sort.SliceStable(v.out, func(i, j int) bool {
		a, b := v.out[i], v.out[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return a.Rule < b.Rule
	})
	if v.truncated {
		v.out = append(v.out, Finding{Rule: "LIMIT", Severity: Warning, XPath: v.root.XPath(), Line: v.root.Line, Column: v.root.Column,
			Message: fmt.Sprintf("more than %d findings: the rest are not listed", MaxFindings)})
	}
	return v.out
}

// HasFatal reports whether any finding is fatal.
func HasFatal(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == Fatal {
			return true
		}
	}
	return false
}

// FailedRules returns the distinct rule ids of the fatal findings, sorted.
func FailedRules(fs []Finding) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if f.Severity == Fatal && !seen[f.Rule] {
			seen[f.Rule] = true
			out = append(out, f.Rule)
		}
	}
	sort.Strings(out)
	return out
}

type validator struct {
	d      *Document
	root   *Element
	out    []Finding
	byName map[string][]*Element
	sums   map[string]*big.Rat // categorySum by "code|rate" and "code|*", computed once
	sRates map[string]bool     // standardRates, computed once

	truncated bool // MaxFindings reached
}

func newValidator(d *Document) *validator {
	v := &validator{d: d, root: d.Root, byName: map[string][]*Element{}}
	d.Root.Walk(func(e *Element) { v.byName[e.Name] = append(v.byName[e.Name], e) })
	return v
}

// MaxFindings bounds what Validate returns: a document with more problems
// ends with one warning "LIMIT" saying that the rest were not listed.
const MaxFindings = 1000

func (v *validator) add(rule string, sev Severity, e *Element, format string, args ...any) {
	if len(v.out) >= MaxFindings {
		v.truncated = true
		return
	}
	if e == nil {
		e = v.root
	}
	v.out = append(v.out, Finding{Rule: rule, Severity: sev, XPath: e.XPath(), Line: e.Line, Column: e.Column, Message: fmt.Sprintf(format, args...)})
}

// fail adds a fatal finding unless ok.
func (v *validator) check(ok bool, rule string, e *Element, format string, args ...any) {
	if !ok {
		v.add(rule, Fatal, e, format, args...)
	}
}

// all returns every element called name (XPath //name).
func (v *validator) all(name string) []*Element { return v.byName[name] }

// under returns the elements called name whose parent is called parent
// (XPath pattern parent/name).
func (v *validator) under(parent, name string) []*Element {
	var out []*Element
	for _, e := range v.byName[name] {
		if e.Parent != nil && e.Parent.Name == parent {
			out = append(out, e)
		}
	}
	return out
}

// lines returns the invoice or credit note lines.
func (v *validator) lines() []*Element { return v.root.Select("cac:InvoiceLine|cac:CreditNoteLine") }

// ---- decimals: xs:decimal arithmetic is exact, so is big.Rat ----

// decimal parses an xs:decimal lexical value (no exponent); ok false if e
// is nil or the value is not a decimal.
func decimal(e *Element) (*big.Rat, bool) {
	if e == nil {
		return nil, false
	}
	return parseDecimal(e.Value())
}

func parseDecimal(s string) (*big.Rat, bool) {
	if !isDecimal(s) {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
	return r, ok
}

func isDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

func rat(n int64) *big.Rat { return new(big.Rat).SetInt64(n) }

func add(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
func sub(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
func mul(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
func abs(a *big.Rat) *big.Rat    { return new(big.Rat).Abs(a) }

// round is XPath fn:round: to the nearest integer, halves toward +infinity.
func round(x *big.Rat) *big.Rat {
	h := add(x, big.NewRat(1, 2))
	q := new(big.Int).Div(h.Num(), h.Denom()) // Euclidean: floor for a positive denominator
	return new(big.Rat).SetInt(q)
}

// round2 is the rules' round(x * 10 * 10) div 100.
func round2(x *big.Rat) *big.Rat {
	return new(big.Rat).Quo(round(mul(x, rat(100))), rat(100))
}

// sumOf adds the decimals at path below each element; values that are
// missing or not decimals count as nothing (XPath sum of what is there).
func sumOf(es []*Element, path string) *big.Rat {
	s := rat(0)
	for _, e := range es {
		for _, x := range e.Select(path) {
			if r, ok := decimal(x); ok {
				s = add(s, r)
			}
		}
	}
	return s
}

func eq(a, b *big.Rat) bool { return a.Cmp(b) == 0 }

// fmtRat prints a decimal for a message.
func fmtRat(r *big.Rat) string { return r.FloatString(2) }

// fractionDigits is string-length(substring-after(., '.')).
func fractionDigits(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

package directory

import (
	"fmt"
	"slices"

	"github.com/edihub/edihub/edifact"
)

// Service segment validation: the interchange and group envelope (UNB, UNG,
// UNE, UNZ) against the segment layouts of the Service directory of the
// interchange's syntax version (Service_V3 for 1..3, Service_V4 for 4), with
// the same element checks as a message segment (type, length, mandatory
// items, components) and the same 0085 codes. A finding names the service
// segment (Tag) with Segment 0: a CONTRL reports it on UCI (UNB, UNZ) or
// UCF (UNG, UNE) with S011, not on UCS.

// envelopeKeyCodes are the service data elements whose value decides what
// the hub does with the interchange (syntax level, version, acknowledgement
// request, test indicator): a value outside the syntax version's code list
// is an error in every strictness, not only in strict mode.
var envelopeKeyCodes = map[string]bool{"0001": true, "0002": true, "0031": true, "0035": true}

// serviceCodeSupplements are code values of the service code lists that the
// shipped reference data lacks, with their source: UNOW (UTF-8) was added
// to code list 0001 by syntax version 4 release 1 (ISO 9735-1:2002 and the
// UNTDID service code directory V4 R1: "UNOW: UN/ECE level W, ISO 10646-1
// octet with code extension technique to support UTF-8"); the data
// transcribes release 0.
var serviceCodeSupplements = map[string]map[string][]string{"4": {"0001": {"UNOW"}}}

// envelopeCodes are the service code lists of one syntax version ("3" or
// "4"), taken from the newest UN directory whose service code list 0002
// says it carries that version's lists (a directory with only
// service_codes_v3 has no "4" in 0002): the Service folders hold no code
// lists, and a directory with both files merges them.
func (s *Set) envelopeCodes(version string) map[string][]string {
	var best *Directory
	for _, d := range s.dirs {
		if !isUNDirectory(d.Name) {
			continue
		}
		has4 := slices.Contains(d.Codes["0002"], "4")
		if (version == "4") != has4 || len(d.Codes["0001"]) == 0 {
			continue
		}
		if best == nil || dirYear(d.Name) > dirYear(best.Name) {
			best = d
		}
	}
	out := map[string][]string{}
	if best != nil {
		for id, l := range best.Codes {
			if id != "" && id[0] == '0' {
				out[id] = l
			}
		}
	}
	for id, add := range serviceCodeSupplements[version] {
		l := slices.Clone(out[id])
		for _, v := range add {
			if !slices.Contains(l, v) {
				l = append(l, v)
			}
		}
		slices.Sort(l)
		out[id] = l
	}
	return out
}

// ValidateInterchange checks the service segments of an EDIFACT interchange
// (its UNB, each UNG and UNE, its UNZ) against the Service directory of its
// syntax version. X12 interchanges and strictness off come back with
// Validated false; the edifact package checks the ISA and GS fields itself.
func (v *Validator) ValidateInterchange(ich *edifact.Interchange) *Result {
	r := &Result{Ref: ich.ControlRef, Type: "UNB", Version: ich.SyntaxVersion, Offset: ich.Offset, Findings: []Finding{}}
	if v.opts.Strictness == Off || ich.Standard != edifact.EDIFACT || ich.Header == nil {
		return r
	}
	version := "3"
	if ich.SyntaxVersion == "4" {
		version = "4"
	}
	svc := v.set.serviceDir(version)
	if svc == nil {
		return r
	}
	r.Directory, r.Validated = svc.Name, true
	c := &check{v: v, r: r, dir: svc, service: svc, envelope: v.envCodes[version], other: v.envCodes[pick(version == "4", "3", "4")]}
	c.elements(ich.Header, 0)
	c.envelopeValues(ich.Header)
	for _, g := range ich.Groups {
		if g.Header != nil {
			c.elements(g.Header, 0)
			c.envelopeValues(g.Header)
		}
		if g.Trailer != nil {
			c.elements(g.Trailer, 0)
		}
	}
	if ich.Trailer != nil {
		c.elements(ich.Trailer, 0)
	}
	return r
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// envelopeValues checks what a layout cannot say: the date (0017) is a
// calendar date and the time (0019) a time of day (ISO 9735-1 / -4 define
// them as YYMMDD or CCYYMMDD and HHMM), and a syntax identifier of the
// other syntax version only (UNOW under version 3) is not supported.
func (c *check) envelopeValues(s *edifact.Segment) {
	date, tm := 4, 4 // S004 is the fourth element of UNB and of UNG
	if d := s.Value(date, 1); d != "" && digitsOnly(d) && (len(d) == 6 || len(d) == 8) && !edifact.ValidDate(d) {
		c.add(SeverityError, CodeInvalidValue, 0, s, date, 1, fmt.Sprintf("0017 \"%s\" is not a calendar date", quote(d)))
	}
	if t := s.Value(tm, 2); t != "" && digitsOnly(t) && len(t) == 4 && !edifact.ValidTime(t) {
		c.add(SeverityError, CodeInvalidValue, 0, s, tm, 2, fmt.Sprintf("0019 \"%s\" is not a time of day (HHMM)", quote(t)))
	}
}

func digitsOnly(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// envelopeCode judges a coded value of a service segment of the envelope
// (c.envelope set): the syntax version's own code list, the key elements
// (envelopeKeyCodes) in every strictness; a syntax identifier or version
// of another syntax version is code 2 (syntax level or version not
// supported). It reports whether it judged the value.
func (c *check) envelopeCode(s *edifact.Segment, pos, e, comp int, id, v string) bool {
	if c.envelope == nil {
		return false
	}
	list, ok := c.envelope[id]
	if !ok || len(list) == 0 {
		return true
	}
	if _, found := slices.BinarySearch(list, v); found {
		return true
	}
	sev, code := c.soft(), CodeInvalidValue
	if envelopeKeyCodes[id] {
		sev = SeverityError
	}
	if id == "0001" || id == "0002" {
		code = CodeSyntaxNotSupported
		if _, other := slices.BinarySearch(c.other[id], v); other {
			c.add(SeverityError, code, pos, s, e, comp, fmt.Sprintf("\"%s\" (%s) belongs to another syntax version than %s", quote(v), id, c.r.Version))
			return true
		}
		// an identifier of no UN level (IATA, the airlines' own): the
		// parser's repertoire setting judges it; here only strict refuses
		sev = c.soft()
	}
	c.add(sev, code, pos, s, e, comp, fmt.Sprintf("\"%s\" is not in code list %s of syntax version %s", quote(v), id, c.r.Version))
	return true
}

package directory

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/edihub/edihub/edifact"
)

// noCodeCheck tells the coded data elements whose value the lookup of the
// message already judged (message type, version, release, association
// code): their code lists in the directories are not complete.
func noCodeCheck(id string) bool {
	switch id {
	case "0065", "0052", "0054", "0057":
		return true
	}
	return false
}

// elements checks the data elements of segment s (position pos) against its
// layout. A segment no directory defines was reported by structure already.
func (c *check) elements(s *edifact.Segment, pos int) {
	def := c.segmentDef(s.Tag)
	if def == nil {
		return
	}
	for i, el := range s.Elements {
		e := i + 1
		if i >= len(def.Elements) {
			if !allEmpty(s.Elements[i:]) {
				c.add(SeverityError, CodeTooManyConstituents, pos, s, e, 0,
					fmt.Sprintf("%s has %d data elements, the directory defines %d", s.Tag, len(s.Elements), len(def.Elements)))
			} else {
				c.add(c.soft(), CodeTrailingSeparator, pos, s, e, 0, "empty data elements after the last one the directory defines")
			}
			break
		}
		c.element(s, pos, e, &def.Elements[i], el)
	}
	for i := len(s.Elements); i < len(def.Elements); i++ {
		if def.Elements[i].Required {
			c.add(SeverityError, CodeMissing, pos, s, i+1, 0, fmt.Sprintf("mandatory data element %s is missing", def.Elements[i].ID))
		}
	}
	for _, rep := range s.Repeats {
		if rep.Element < 1 || rep.Element > len(def.Elements) {
			continue // reported as too many constituents
		}
		ed := &def.Elements[rep.Element-1]
		dir, factor, known := c.dir.Name, 1, false
		if c.dir.Segments[s.Tag] == def { // the factors are the message directory's
			factor, known = repeatFactor(dir, s.Tag, rep.Element)
		} else if c.service != nil {
			dir = c.service.Name
		}
		for k, occ := range rep.Occurrences {
			n := k + 2 // the occurrence (the first is in Elements)
			if n > factor {
				fd := c.add(SeverityError, CodeTooManyRepetitions, pos, s, rep.Element, 0,
					tooManyText(dir, s.Tag, rep.Element, ed.ID, len(rep.Occurrences)+1, factor, known))
				if fd != nil {
					fd.Repetition = n
				}
				break
			}
			// an allowed occurrence is checked as the first one is; its
			// findings name it (S011 0136)
			from := len(c.r.Findings)
			c.element(s, pos, rep.Element, ed, occ)
			for i := from; i < len(c.r.Findings); i++ {
				c.r.Findings[i].Repetition = n
			}
		}
	}
}

// tooManyText is the refusal of n occurrences of data element id at
// position e of segment tag. Where no repeat factor is known for the
// position in directory dir, it says so: the one occurrence allowed is
// edihub's default for data that carries no factor, which a partner's EDI
// team should not take for a syntax fault proven against the standard.
func tooManyText(dir, tag string, e int, id string, n, factor int, known bool) string {
	if known {
		return fmt.Sprintf("data element %s occurs %d times; directory %s allows %d (repeat factor of %s element %d)", id, n, dir, factor, tag, e)
	}
	return fmt.Sprintf("data element %s occurs %d times; directory %s as shipped carries no repeat factor for %s element %d, so one occurrence is allowed (not a verified syntax fault: the factor is unknown to edihub)", id, n, dir, tag, e)
}

func allEmpty(els [][]string) bool {
	for _, el := range els {
		for _, v := range el {
			if v != "" {
				return false
			}
		}
	}
	return true
}

// element checks one occurrence of a data element.
func (c *check) element(s *edifact.Segment, pos, e int, def *ElementDef, comps []string) {
	if allEmpty([][]string{comps}) {
		if def.Required {
			c.add(SeverityError, CodeMissing, pos, s, e, 0, fmt.Sprintf("mandatory data element %s is empty", def.ID))
		}
		return
	}
	if def.Components == nil {
		if len(comps) > 1 && !allEmpty([][]string{comps[1:]}) {
			c.add(SeverityError, CodeTooManyConstituents, pos, s, e, 2,
				fmt.Sprintf("data element %s is simple but has components", def.ID))
		}
		c.value(s, pos, e, 0, &def.Simple, comps[0], true)
		return
	}
	// A composite whose agency (3055) is not UN/ECE (6) carries codes of
	// another code list: only its structure, types and lengths are checked.
	unCodes := true
	for j, cd := range def.Components {
		if cd.ID == "3055" && j < len(comps) && comps[j] != "" && comps[j] != "6" {
			unCodes = false
		}
	}
	for j, v := range comps {
		if j >= len(def.Components) {
			if v != "" {
				c.add(SeverityError, CodeTooManyConstituents, pos, s, e, j+1,
					fmt.Sprintf("composite %s has %d components, the directory defines %d", def.ID, len(comps), len(def.Components)))
				break
			}
			continue
		}
		c.value(s, pos, e, j+1, &def.Components[j], v, unCodes || def.Components[j].ID == "3055")
	}
	for j := range def.Components {
		if def.Components[j].Required && (j >= len(comps) || comps[j] == "") {
			c.add(SeverityError, CodeMissing, pos, s, e, j+1,
				fmt.Sprintf("mandatory component %s of %s is missing", def.Components[j].ID, def.ID))
		}
	}
}

// value checks one simple element or component value: type, length, code.
func (c *check) value(s *edifact.Segment, pos, e, comp int, def *ComponentDef, v string, codes bool) {
	if v == "" {
		return // a missing mandatory value is reported by the caller
	}
	n := len(v) // bytes: an upper bound of the characters
	switch def.Type {
	case TypeN:
		code, digits, msg := numeric(v)
		if code != 0 {
			c.add(SeverityError, code, pos, s, e, comp, fmt.Sprintf("%s \"%s\": %s", def.ID, quote(v), msg))
			return
		}
		n = digits
	case TypeA:
		for i := 0; i < len(v); i++ {
			if v[i] >= '0' && v[i] <= '9' {
				c.add(SeverityError, CodeInvalidCharType, pos, s, e, comp, fmt.Sprintf("%s \"%s\": a digit in an alphabetic data element", def.ID, quote(v)))
				return
			}
		}
		if n > def.MaxLen || def.MinLen > 0 {
			n = textLen(v)
		}
	default:
		if n > def.MaxLen || def.MinLen > 0 {
			n = textLen(v)
		}
	}
	if def.MaxLen > 0 && n > def.MaxLen {
		c.add(SeverityError, CodeTooLong, pos, s, e, comp, fmt.Sprintf("%s \"%s\" is %d long, at most %d allowed", def.ID, quote(v), n, def.MaxLen))
		return
	}
	if def.MinLen > 0 && n < def.MinLen {
		c.add(SeverityError, CodeTooShort, pos, s, e, comp, fmt.Sprintf("%s \"%s\" is %d long, exactly %d required", def.ID, quote(v), n, def.MinLen))
		return
	}
	if !codes || noCodeCheck(def.ID) || c.envelopeCode(s, pos, e, comp, def.ID, v) {
		return
	}
	if list := c.codes(def.ID); len(list) > 0 {
		if _, found := slices.BinarySearch(list, v); !found {
			c.add(c.soft(), CodeInvalidValue, pos, s, e, comp, fmt.Sprintf("\"%s\" is not in code list %s", quote(v), def.ID))
		}
	}
}

// textLen is the length of an alphanumeric value in characters: runes when
// it is valid UTF-8 (UNOW, UNOY), else bytes (the 8-bit syntax levels).
func textLen(v string) int {
	if utf8.ValidString(v) {
		return utf8.RuneCountInString(v)
	}
	return len(v)
}

// numeric checks a numeric value (ISO 9735: an optional leading minus sign,
// digits, at most one decimal mark, '.' or ','), returning the 0085 code of
// the first fault and the number of digits, which is what its length counts.
func numeric(v string) (code, digits int, msg string) {
	mark := -1
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch {
		case ch >= '0' && ch <= '9':
			digits++
		case ch == '-' && i == 0 && len(v) > 1:
		case ch == '.' || ch == ',':
			if mark >= 0 {
				return CodeInvalidDecimalNotation, 0, "more than one decimal mark"
			}
			if digits == 0 {
				return CodeMissingDigitBeforeMark, 0, "no digit before the decimal mark"
			}
			mark = i
		default:
			return CodeInvalidCharType, 0, "not a number"
		}
	}
	if mark == len(v)-1 {
		return CodeInvalidDecimalNotation, 0, "decimal mark without a digit after it"
	}
	if digits == 0 {
		return CodeInvalidCharType, 0, "not a number"
	}
	return 0, digits, ""
}

package edifact

import (
	"fmt"
	"strings"
)

// X12 envelope field checks. X12 ships no directory here, so the ISA and GS
// element attributes of the X12.5/X12.6 control segments (X12 005010
// Interchange Control Structures, the ISA and GS segment tables) are written
// out once: type (ID, AN, N0, DT, TM), minimum and maximum length, and the
// code values of the ID elements the hub acts on. A failure names the
// element (position after the tag) with a 0085 code, like every other
// envelope error, and its TA105 note is derived from the element.

// x12Field is one element rule: kind is "ID", "AN", "N0", "DT" or "TM".
type x12Field struct {
	name     string
	kind     string
	min, max int
	codes    []string // ID values allowed ("" none: any of the alphabet)
}

// isaFields are ISA01..ISA15 (ISA16 is a separator, checked by the Reader).
// Fixed width: min = max for each.
var isaFields = [15]x12Field{
	{"ISA01 authorization information qualifier", "ID", 2, 2, []string{"00", "01", "02", "03", "04", "05", "06"}},
	{"ISA02 authorization information", "AN", 10, 10, nil},
	{"ISA03 security information qualifier", "ID", 2, 2, []string{"00", "01"}},
	{"ISA04 security information", "AN", 10, 10, nil},
	{"ISA05 interchange id qualifier", "ID", 2, 2, nil},
	{"ISA06 interchange sender id", "AN", 15, 15, nil},
	{"ISA07 interchange id qualifier", "ID", 2, 2, nil},
	{"ISA08 interchange receiver id", "AN", 15, 15, nil},
	{"ISA09 interchange date", "DT", 6, 6, nil},
	{"ISA10 interchange time", "TM", 4, 4, nil},
	{"ISA11 repetition separator / standards identifier", "AN", 1, 1, nil},
	{"ISA12 interchange control version number", "N0", 5, 5, nil},
	{"ISA13 interchange control number", "N0", 9, 9, nil},
	{"ISA14 acknowledgment requested", "ID", 1, 1, []string{"0", "1"}},
	{"ISA15 usage indicator", "ID", 1, 1, []string{"I", "P", "T"}},
}

// gsFields are GS01..GS08.
var gsFields = [8]x12Field{
	{"GS01 functional identifier code", "ID", 2, 2, nil},
	{"GS02 application sender's code", "AN", 2, 15, nil},
	{"GS03 application receiver's code", "AN", 2, 15, nil},
	{"GS04 date", "DT", 6, 8, nil}, // CCYYMMDD from 004010, YYMMDD before
	{"GS05 time", "TM", 4, 8, nil},
	{"GS06 group control number", "N0", 1, 9, nil},
	{"GS07 responsible agency code", "ID", 1, 2, []string{"T", "X"}},
	{"GS08 version / release / industry identifier code", "AN", 1, 12, nil},
}

// checkX12Fields checks the elements of an ISA or GS against fields.
func checkX12Fields(s *Segment, fields []x12Field) error {
	n := len(fields)
	if s.Tag == "ISA" {
		n++ // ISA16
	}
	if len(s.Elements) > n {
		return segErr(s, n+1, 0, CodeTooManyConstituents, "%s has %d elements, at most %d", s.Tag, len(s.Elements), n)
	}
	for i, f := range fields {
		v := s.Value(i+1, 1)
		if s.Tag == "ISA" && (f.kind == "AN" || f.kind == "ID") && i != 10 {
			// fixed width: the value is padded with spaces
			if len(v) != f.max {
				return segErr(s, i+1, 1, CodeTooLong, "%s is %d characters, exactly %d required", f.name, len(v), f.max)
			}
			v = strings.TrimRight(v, " ")
			if f.kind == "AN" {
				continue // blank is allowed: ISA02/04 are spaces when ISA01/03 are 00
			}
		}
		if v == "" {
			return segErr(s, i+1, 1, CodeMissing, "%s is missing", f.name)
		}
		if msg := x12Value(f, v); msg != "" {
			code := CodeInvalidValue
			if len(v) > f.max {
				code = CodeTooLong
			} else if len(v) < f.min {
				code = CodeTooShort
			}
			return segErr(s, i+1, 1, code, "%s %s: %s", f.name, quoted(v, 20), msg)
		}
	}
	if s.Tag == "ISA" {
		// ISA11 before 00402 is the standards identifier, code U; from
		// 00402 on it is the repetition separator (the Reader checked it)
		if v := s.Value(12, 1); v < "00402" && s.Value(11, 1) != "U" {
			return segErr(s, 11, 1, CodeInvalidValue, "ISA11 interchange control standards identifier %s under version %s: want U",
				quoted(s.Value(11, 1), 4), quoted(v, 8))
		}
	}
	return nil
}

// x12Value says what is wrong with v for f ("" nothing).
func x12Value(f x12Field, v string) string {
	if len(v) > f.max {
		return fmt.Sprintf("%d characters, at most %d", len(v), f.max)
	}
	if len(v) < f.min {
		return fmt.Sprintf("%d characters, at least %d", len(v), f.min)
	}
	switch f.kind {
	case "N0":
		if !digits(v) {
			return "not an unsigned integer"
		}
	case "DT":
		if !digits(v) || !ValidDate(v) {
			return "not a date (YYMMDD or CCYYMMDD)"
		}
	case "TM":
		if !digits(v) || !ValidTime(v) {
			return "not a time (HHMM[SS[d..]])"
		}
	case "ID":
		if f.codes != nil && !contains(f.codes, v) {
			return "not one of " + strings.Join(f.codes, ", ")
		}
	}
	return ""
}

func contains(list []string, v string) bool {
	for _, c := range list {
		if c == v {
			return true
		}
	}
	return false
}

func digits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return v != ""
}

// ValidDate reports whether v (digits) is a calendar date YYMMDD or
// CCYYMMDD (ISO 9735 0017, X12 DT).
func ValidDate(v string) bool {
	if !digits(v) || (len(v) != 6 && len(v) != 8) {
		return false
	}
	y := atoi(v[:len(v)-4])
	if len(v) == 6 {
		y += 2000 // leap years: 00 counts as 2000, as ISO 9735 windows it
	}
	m, d := atoi(v[len(v)-4:len(v)-2]), atoi(v[len(v)-2:])
	if m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days[2] = 29
	}
	return d <= days[m]
}

// ValidTime reports whether v (digits) is a time HHMM, HHMMSS or HHMMSSd..
// (X12 TM; ISO 9735 0019 is HHMM).
func ValidTime(v string) bool {
	if !digits(v) || len(v) < 4 || len(v) == 5 {
		return false
	}
	if atoi(v[:2]) > 23 || atoi(v[2:4]) > 59 {
		return false
	}
	return len(v) < 6 || atoi(v[4:6]) <= 59
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

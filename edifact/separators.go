package edifact

import "fmt"

// Separators are the service characters of one interchange. Zero in Release
// or Repetition means "none": the release character can be switched off with
// a space in UNA, and repetition exists only from syntax version 4 on.
type Separators struct {
	Component  byte
	Element    byte
	Decimal    byte
	Release    byte
	Repetition byte
	Segment    byte
}

// Level A defaults (ISO 9735): ":+.? '" with "*" as repetition from version 4.
var defaultsA = Separators{Component: ':', Element: '+', Decimal: '.', Release: '?', Segment: '\''}

const defaultRepetitionA = '*'

// Level B defaults use the information separators IS1, IS3 and IS4 (and IS2
// for repetition in version 4). There is no release character: the
// separators cannot occur in text.
var defaultsB = Separators{Component: 0x1F, Element: 0x1D, Decimal: '.', Segment: 0x1C}

const defaultRepetitionB = 0x1E

// unaLen is the fixed length of the service string advice "UNA:+.? '".
const unaLen = 9

// sepError is a bad service character at a position inside a header.
type sepError struct {
	pos int // index in the header
	msg string
}

func (e *sepError) Error() string { return e.msg }

// parseUNA reads the six service characters of a 9-byte UNA. The repetition
// character is returned apart: whether it counts depends on the syntax
// version, which only UNB tells.
func parseUNA(b []byte) (s Separators, rep byte, err *sepError) {
	if len(b) < unaLen {
		return s, 0, &sepError{pos: len(b), msg: fmt.Sprintf("UNA is %d bytes, needs 9", len(b))}
	}
	s = Separators{Component: b[3], Element: b[4], Decimal: b[5], Release: b[6], Segment: b[8]}
	rep = b[7]
	if s.Release == ' ' {
		s.Release = 0
	}
	if rep == ' ' {
		rep = 0
	}
	type named struct {
		pos  int
		c    byte
		name string
	}
	list := []named{{3, s.Component, "component separator"}, {4, s.Element, "element separator"},
		{6, s.Release, "release character"}, {7, rep, "repetition separator"}, {8, s.Segment, "segment terminator"}}
	for i, x := range list {
		if x.c == 0 {
			continue
		}
		if msg := badServiceChar(x.c); msg != "" {
			return s, 0, &sepError{pos: x.pos, msg: fmt.Sprintf("UNA %s %s %s", x.name, quoteByte(x.c), msg)}
		}
		for _, y := range list[:i] {
			if y.c == x.c {
				return s, 0, &sepError{pos: x.pos, msg: fmt.Sprintf("UNA %s %s is also the %s", x.name, quoteByte(x.c), y.name)}
			}
		}
	}
	return s, rep, nil
}

// badServiceChar says why c cannot be a separator, or "" if it can. Letters
// and digits would make tags ambiguous; bytes above 0x7F would be half of a
// multi-byte character (a "…" terminator copied from a word processor).
func badServiceChar(c byte) string {
	switch {
	case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		return "is a letter or digit"
	case c == ' ':
		return "is a space"
	case c >= 0x80:
		return "is not a 7-bit character"
	case c == 0:
		return "is NUL"
	}
	return ""
}

// X12 ISA: 106 bytes of fixed width. isaSepPos are the offsets of the 16
// element separators; byte 104 is the component separator, 105 the terminator.
const isaLen = 106

var isaSepPos = [16]int{3, 6, 17, 20, 31, 34, 50, 53, 69, 76, 81, 83, 89, 99, 101, 103}

// parseISA reads the separators of an X12 interchange from its fixed-width
// ISA header, and the version (ISA12). ISA11 is the repetition separator from
// version 00402 on and the standards identifier ("U") before.
func parseISA(b []byte) (s Separators, version string, err *sepError) {
	if len(b) < isaLen {
		return s, "", &sepError{pos: len(b), msg: fmt.Sprintf("ISA is %d bytes, needs %d", len(b), isaLen)}
	}
	elem := b[3]
	for _, p := range isaSepPos {
		if b[p] != elem {
			return s, "", &sepError{pos: p, msg: fmt.Sprintf("ISA is not fixed-width: expected element separator %s at byte %d, found %s", quoteByte(elem), p, quoteByte(b[p]))}
		}
	}
	s = Separators{Element: elem, Component: b[104], Segment: b[105]}
	version = string(b[84:89])
	// Some 00402+ senders still put the old standards identifier "U" in
	// ISA11; a letter or digit cannot be a separator, so it means "none".
	if version >= "00402" && badServiceChar(b[82]) == "" {
		s.Repetition = b[82]
	}
	list := []struct {
		pos  int
		c    byte
		name string
	}{{3, s.Element, "element separator"}, {104, s.Component, "component separator (ISA16)"},
		{82, s.Repetition, "repetition separator (ISA11)"}, {105, s.Segment, "segment terminator"}}
	for i, x := range list {
		if x.c == 0 {
			continue
		}
		if msg := badServiceChar(x.c); msg != "" {
			return s, "", &sepError{pos: x.pos, msg: fmt.Sprintf("ISA %s %s %s", x.name, quoteByte(x.c), msg)}
		}
		for _, y := range list[:i] {
			if y.c == x.c {
				return s, "", &sepError{pos: x.pos, msg: fmt.Sprintf("ISA %s %s is also the %s", x.name, quoteByte(x.c), y.name)}
			}
		}
	}
	return s, version, nil
}

// isSeparator reports whether c is one of the active separators.
func (s *Separators) isSeparator(c byte) bool {
	return c != 0 && (c == s.Component || c == s.Element || c == s.Segment || c == s.Release || c == s.Repetition)
}

package edifact

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/edihub/edihub/escape"
)

// CauseSchema is what Cause returns for every error of this package: the input
// does not follow the syntax, so retrying cannot help (the hub's DLQ cause).
const CauseSchema = "schema"

// Syntax error codes of UN/EDIFACT code list 0085 (the codes a CONTRL UCI/UCS/UCD
// would carry). X12 errors use the same codes so that one field serves both.
const (
	CodeSyntaxNotSupported   = 2  // syntax version or level (character set) not supported
	CodeInvalidValue         = 12 // invalid value
	CodeMissing              = 13 // missing (segment, element, trailer)
	CodeNotSupportedPosition = 15 // not supported in this position
	CodeTooManyConstituents  = 16 // too many data elements or components
	CodeUnspecified          = 18 // unspecified error (size limit)
	CodeInvalidServiceChar   = 20 // character invalid as service character
	CodeInvalidCharacter     = 21 // invalid character(s) for the repertoire
	CodeInvalidServiceTag    = 22 // invalid service segment tag
	CodeDuplicate            = 26 // duplicate detected (message reference)
	CodeReferenceMismatch    = 28 // references do not match (trailer vs header)
	CodeCountMismatch        = 29 // control count does not match
	CodeGroupsMessagesMixed  = 30 // functional groups and messages mixed
	CodeLowerLevelEmpty      = 32 // lower level empty
	CodeOutsideEnvelope      = 33 // invalid occurrence outside message/group
	CodeTooManyRepetitions   = 35 // too many repetitions
	CodeTooLong              = 39 // data element (or segment) too long
	CodeTooShort             = 40 // data element too short
)

// GuardError is a refusal by Guard: the input is not worth parsing.
type GuardError struct {
	Offset int64  // byte offset in the input given to Guard
	Code   int    // code list 0085
	Msg    string // plain message, printable ASCII
}

func (e *GuardError) Error() string {
	return fmt.Sprintf("schema: %s (offset %d, code %d)", e.Msg, e.Offset, e.Code)
}

// Cause classifies the error for the hub: always "schema".
func (e *GuardError) Cause() string { return CauseSchema }

// ParseError is a syntax or envelope error found by the Reader or Parse.
// Positions are 1-based; zero means unknown or not applicable.
type ParseError struct {
	Offset    int64  // byte offset of the offending byte or segment in the input
	Line      int    // line of Offset (LF counts lines)
	Column    int    // byte column of Offset
	Segment   int    // segment number in the stream (UNA not counted)
	Tag       string // segment tag, if known
	Element   int    // data element position after the tag
	Component int    // component position within the element
	Code      int    // code list 0085
	Err       error  // what went wrong
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("schema: ")
	if e.Segment > 0 {
		b.WriteString("segment ")
		b.WriteString(strconv.Itoa(e.Segment))
		if e.Tag != "" {
			b.WriteString(" ")
			b.WriteString(printable(e.Tag, 8))
		}
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "at line %d col %d (offset %d)", e.Line, e.Column, e.Offset)
	if e.Element > 0 {
		fmt.Fprintf(&b, " element %d", e.Element)
		if e.Component > 0 {
			fmt.Fprintf(&b, " component %d", e.Component)
		}
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(oneLine(e.Err.Error()))
	}
	if e.Code != 0 {
		fmt.Fprintf(&b, " (code %d)", e.Code)
	}
	return b.String()
}

// Cause classifies the error for the hub: always "schema".
func (e *ParseError) Cause() string { return CauseSchema }

func (e *ParseError) Unwrap() error { return e.Err }

// Warning is a tolerated deviation, reported in Lenient mode.
type Warning struct {
	Offset int64  `json:"offset"`
	Code   int    `json:"code"`
	Msg    string `json:"msg"`
}

func (w Warning) String() string {
	return fmt.Sprintf("%s (offset %d, code %d)", w.Msg, w.Offset, w.Code)
}

// printable renders s for a one-line message in package escape's style
// (\xNN, \n, \\ for a backslash), cut after max bytes of s. Messages
// quote it with quoted, never %q, so one error has one escaping style.
func printable(s string, max int) string {
	if len(s) > max {
		return escape.Line(s[:max]) + "..."
	}
	return escape.Line(s)
}

// quoted is printable in double quotes: "UNB+..." or "\x0AU".
func quoted(s string, max int) string { return `"` + printable(s, max) + `"` }

// quoteByte names one byte by itself: 'x' when printable, else its value
// 0xNN (a byte value in prose, not quoted text).
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return fmt.Sprintf("0x%02X", c)
}

// oneLine makes sure an error text cannot break the one-line header contract.
func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return printable(s, len(s))
		}
	}
	return s
}

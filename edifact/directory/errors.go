package directory

import (
	"fmt"
	"strconv"
	"strings"
)

// Syntax error codes of UN/EDIFACT code list 0085 (Syntax error, coded), as a
// CONTRL message reports them in UCI, UCM, UCS and UCD. The values that
// package edifact reports for syntax and envelope errors are the same codes.
const (
	CodeSyntaxNotSupported      = 2  // syntax level or version not supported
	CodeRecipientNotActual      = 7  // interchange recipient not actual recipient
	CodeInvalidValue            = 12 // invalid value (also: a code not in its code list)
	CodeMissing                 = 13 // missing (mandatory segment, element or component)
	CodeValueNotSupported       = 14 // value not supported in this position (e.g. no directory for the message)
	CodeNotSupportedPosition    = 15 // not supported in this position (segment out of order or unknown)
	CodeTooManyConstituents     = 16 // too many data elements or components
	CodeNoAgreement             = 17 // no agreement
	CodeUnspecified             = 18 // unspecified error
	CodeInvalidDecimalNotation  = 19 // invalid decimal notation
	CodeInvalidServiceChar      = 20 // character invalid as service character
	CodeInvalidCharacter        = 21 // invalid character(s)
	CodeInvalidServiceTag       = 22 // invalid service segment tag
	CodeUnknownSender           = 23 // unknown interchange sender
	CodeTooOld                  = 24 // too old
	CodeTestIndicatorNotSupport = 25 // test indicator not supported
	CodeDuplicate               = 26 // duplicate detected
	CodeSecurityNotSupported    = 27 // security function not supported
	CodeReferenceMismatch       = 28 // references do not match
	CodeCountMismatch           = 29 // control count does not match
	CodeGroupsMessagesMixed     = 30 // functional groups and messages mixed
	CodeMoreThanOneType         = 31 // more than one message type in group
	CodeLowerLevelEmpty         = 32 // lower level empty
	CodeOutsideEnvelope         = 33 // invalid occurrence outside message, package or group
	CodeTooManyRepetitions      = 35 // too many segment (or data element) repetitions
	CodeTooManyGroupRepetitions = 36 // too many segment group repetitions
	CodeInvalidCharType         = 37 // invalid type of characters (a letter in a numeric element)
	CodeMissingDigitBeforeMark  = 38 // missing digit in front of decimal sign
	CodeTooLong                 = 39 // data element too long
	CodeTooShort                = 40 // data element too short
	CodeUnknownRecipient        = 43 // unknown interchange recipient
	CodeTrailingSeparator       = 45 // trailing separator
	CodeCharsetNotSupported     = 46 // character set not supported
)

// CauseSchema is what Error.Cause returns: the message does not follow its
// directory, so retrying cannot help (the hub's DLQ cause "schema").
const CauseSchema = "schema"

// Severity of a Finding.
type Severity string

// Severities: an error rejects the message, a warning is only reported.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one deviation of a message from its directory. Positions are
// 1-based; zero means "not applicable" (a segment-level finding has Element
// 0, a whole-element finding Component 0). Segment is what a CONTRL UCS
// reports in 0096 (segment position in the message, UNH = 1). Element counts
// the data elements after the tag, as edifact.Segment.Elements does; a
// CONTRL UCD S011 0098 counts the tag as position 1, so it carries
// Element+1 (and Component as 0104).
type Finding struct {
	Severity   Severity `json:"severity"`
	Code       int      `json:"code"`                 // code list 0085
	Segment    int      `json:"segment"`              // position in the message, UNH = 1
	Tag        string   `json:"tag"`                  // tag of the segment at Segment ("" past the end)
	Element    int      `json:"element,omitempty"`    // data element position after the tag (UCD 0098 is Element+1)
	Component  int      `json:"component,omitempty"`  // component position within the element
	Repetition int      `json:"repetition,omitempty"` // occurrence of a repeated element (syntax 4), 1 = first
	Missing    string   `json:"missing,omitempty"`    // code 13 on a segment: the missing segment's tag (or group, "SG2/NAD")
	Number     int      `json:"number"`               // segment number in the input stream (UNA not counted)
	Offset     int64    `json:"offset"`               // byte offset of the segment in the input
	Line       int      `json:"line,omitempty"`       // line of the segment in the input
	Msg        string   `json:"msg"`                  // plain explanation, printable ASCII
}

// String renders the finding on one line: "segment 5 DTM element 1
// component 2: ... (code 12)".
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString("segment ")
	b.WriteString(strconv.Itoa(f.Segment))
	if f.Tag != "" {
		b.WriteString(" " + f.Tag)
	}
	if f.Element > 0 {
		fmt.Fprintf(&b, " element %d", f.Element)
		if f.Component > 0 {
			fmt.Fprintf(&b, " component %d", f.Component)
		}
		if f.Repetition > 1 {
			fmt.Fprintf(&b, " repetition %d", f.Repetition)
		}
	}
	fmt.Fprintf(&b, ": %s (code %d)", f.Msg, f.Code)
	return b.String()
}

// Error is the error of a message that failed directory validation: its
// identity and every finding of severity error (warnings are in Result).
type Error struct {
	Ref       string    // UNH 0062
	Type      string    // UNH S009 0065
	Version   string    // 0052
	Release   string    // 0054
	Directory string    // the directory it was checked against (D96A), "" if none
	Offset    int64     // byte offset of UNH
	Findings  []Finding // severity error only, in message order; never empty
}

// Error prints the first finding, and how many more there are, on one line.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schema: message %s %s %s %s", quote(e.Ref), quote(e.Type), quote(e.Version), quote(e.Release))
	if e.Directory != "" {
		fmt.Fprintf(&b, " (directory %s)", e.Directory)
	}
	if len(e.Findings) > 0 {
		b.WriteString(": ")
		b.WriteString(e.Findings[0].String())
	}
	if n := len(e.Findings) - 1; n > 0 {
		fmt.Fprintf(&b, " (and %d more)", n)
	}
	return b.String()
}

// Cause classifies the error for the hub: always "schema".
func (e *Error) Cause() string { return CauseSchema }

// First returns the first finding (the one a one-line header carries).
func (e *Error) First() Finding { return e.Findings[0] }

// quote renders untrusted text for a one-line message: printable ASCII as
// is, anything else escaped, cut after 35 bytes.
func quote(s string) string {
	cut := false
	if len(s) > 35 {
		s, cut = s[:35], true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\x%02x", c)
		}
	}
	if cut {
		b.WriteString("...")
	}
	return b.String()
}

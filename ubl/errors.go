package ubl

import (
	"bytes"
	"fmt"

	"github.com/edihub/edihub/wire"
)

// Reasons of an *Error: why a document was refused before or while parsing.
const (
	ReasonSize       = "size"       // over Limits.MaxSize
	ReasonEncoding   = "encoding"   // not UTF-8 (UTF-16 BOM, other declared encoding)
	ReasonUTF8       = "utf8"       // invalid UTF-8 or a character XML forbids
	ReasonDoctype    = "doctype"    // a DOCTYPE or other markup declaration: DTDs, entities
	ReasonDepth      = "depth"      // nesting deeper than Limits.MaxDepth
	ReasonElements   = "elements"   // more elements than Limits.MaxElements
	ReasonAttributes = "attributes" // more attributes on one element than Limits.MaxAttributes
	ReasonName       = "name"       // a name longer than Limits.MaxNameLen
	ReasonText       = "text"       // a text node or attribute value longer than Limits.MaxTextLen
	ReasonNotUBL     = "not-ubl"    // root is not a UBL 2 Invoice or CreditNote
	ReasonMalformed  = "malformed"  // not well-formed XML
)

// Error is a refusal by Guard or Parse. Positions are 1-based (Line counts
// LF, Column counts bytes); Offset is the byte offset in the input given.
type Error struct {
	Reason string
	Offset int64
	Line   int
	Column int
	Msg    string // plain message
}

func (e *Error) Error() string {
	return fmt.Sprintf("schema: %s (line %d, column %d, offset %d)", e.Msg, e.Line, e.Column, e.Offset)
}

// Cause classifies the error for the hub: always "schema" (malformed or
// dangerous input is a syntax fault; retrying cannot help).
func (e *Error) Cause() string { return wire.CauseSchema }

// Rule is the pseudo rule id of the error as test suites name it: DOCTYPE
// for a document type declaration, XML-WF for input that is not
// well-formed XML, XML-LIMIT for a limit, NOT-UBL for another document.
func (e *Error) Rule() string {
	switch e.Reason {
	case ReasonDoctype:
		return "DOCTYPE"
	case ReasonMalformed, ReasonUTF8, ReasonEncoding:
		return "XML-WF"
	case ReasonNotUBL:
		return "NOT-UBL"
	}
	return "XML-LIMIT"
}

// errAt builds an *Error at offset off of data, computing line and column
// (only on the error path: the scan itself does not count lines).
func errAt(data []byte, base int64, off int, reason, format string, args ...any) *Error {
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return &Error{Reason: reason, Offset: base + int64(off), Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

package directory

import (
	"bytes"
	"errors"

	"github.com/edihub/edihub/edifact"
)

// FileResult is one file's object in `edihub edifact validate --json`.
type FileResult struct {
	File     string    `json:"file"`
	OK       bool      `json:"ok"`
	Error    string    `json:"error,omitempty"` // envelope/syntax error, or unreadable
	Cause    string    `json:"cause,omitempty"`
	Code     int       `json:"code,omitempty"`
	Messages []*Result `json:"messages"`
	// Interchanges are the service segment findings of each EDIFACT
	// interchange (UNB, UNG, UNE, UNZ against Service V3/V4).
	Interchanges []*Result `json:"interchanges"`
	Errors       int       `json:"errors"`   // findings of severity error, all messages
	Warnings     int       `json:"warnings"` // findings of severity warning
}

// ValidateFile parses data (size bytes, of which at most maxSize were
// read) like edifact check and validates every EDIFACT message and
// interchange against its directory. An envelope or syntax error is a
// failed file (cause schema), with its code.
func (v *Validator) ValidateFile(name string, data []byte, size, maxSize int64, o *edifact.Options) FileResult {
	res := FileResult{File: name, Messages: []*Result{}, Interchanges: []*Result{}}
	var doc *edifact.Document
	var err error
	if size > maxSize {
		_, err = edifact.GuardReaderAt(bytes.NewReader(nil), size, o)
	} else {
		doc, err = edifact.Walk(data, o, func(m *edifact.Message) error {
			if m.Interchange == nil || m.Interchange.Standard != "EDIFACT" {
				return nil // X12: no directory validation
			}
			vr := v.Validate(m)
			for _, fd := range vr.Findings {
				if fd.Severity == SeverityError {
					res.Errors++
				} else {
					res.Warnings++
				}
			}
			res.Messages = append(res.Messages, vr)
			return nil
		})
	}
	if err != nil {
		res.Error = err.Error()
		res.Cause = edifact.CauseSchema
		var ge *edifact.GuardError
		var pe *edifact.ParseError
		switch {
		case errors.As(err, &ge):
			res.Code = ge.Code
		case errors.As(err, &pe):
			res.Code = pe.Code
		}
		return res
	}
	for _, ich := range doc.Interchanges {
		if ir := v.ValidateInterchange(ich); ir.Validated {
			for _, fd := range ir.Findings {
				if fd.Severity == SeverityError {
					res.Errors++
				} else {
					res.Warnings++
				}
			}
			res.Interchanges = append(res.Interchanges, ir)
		}
	}
	res.OK = res.Errors == 0
	return res
}

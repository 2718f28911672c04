package ubl

import "errors"

// FileResult is one file of `edihub ubl check|validate` (--json): what
// the parser or the validator said about it.
type FileResult struct {
	File     string    `json:"file"`
	OK       bool      `json:"ok"`
	Type     string    `json:"type,omitempty"`
	Elements int       `json:"elements,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
	Error    string    `json:"error,omitempty"`
	Cause    string    `json:"cause,omitempty"`
	Rule     string    `json:"rule,omitempty"` // the refusal's pseudo rule (XML-WF, DOCTYPE, ...)
	Reason   string    `json:"reason,omitempty"`
	Line     int       `json:"line,omitempty"`
	Column   int       `json:"column,omitempty"`
	Offset   *int64    `json:"offset,omitempty"`
}

// Report is the --json document of check and validate.
type Report struct {
	Files      []FileResult `json:"files"`
	OK         int          `json:"ok"`
	Failed     int          `json:"failed"`
	Unreadable int          `json:"unreadable"`
}

// NewReport counts results, failed and unreadable of them, into a Report.
func NewReport(results []FileResult, failed, unreadable int) Report {
	return Report{Files: results, OK: len(results) - failed - unreadable, Failed: failed, Unreadable: unreadable}
}

// CheckResult parses data (well-formedness and the guards only).
func CheckResult(file string, data []byte, l *Limits) FileResult {
	res := FileResult{File: file}
	doc, err := ParseBytes(data, l)
	if err != nil {
		res.describe(err)
		return res
	}
	res.OK, res.Type, res.Elements = true, doc.Type, doc.Elements
	return res
}

// ValidateResult parses and validates data: OK when no finding is fatal;
// otherwise Cause is the findings' DLQ cause.
func ValidateResult(file string, data []byte, l *Limits, o *Options) FileResult {
	res := FileResult{File: file}
	doc, findings, err := Check(data, l, o)
	if err != nil {
		res.describe(err)
		return res
	}
	res.Type, res.Elements, res.Findings = doc.Type, doc.Elements, findings
	if res.OK = !HasFatal(findings); !res.OK {
		res.Cause = Cause(findings)
	}
	return res
}

// describe fills the error fields, with the refusal's place and rule when
// err is an *Error.
func (res *FileResult) describe(err error) {
	res.Error = err.Error()
	var ue *Error
	if errors.As(err, &ue) {
		res.Cause, res.Rule, res.Reason = ue.Cause(), ue.Rule(), ue.Reason
		res.Line, res.Column, res.Offset = ue.Line, ue.Column, &ue.Offset
	}
}

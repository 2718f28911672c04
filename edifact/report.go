package edifact

import "errors"

// FileResult is one file of `edihub edifact check` (--json): the
// summary of a file that parsed, or the refusal with its place.
type FileResult struct {
	File         string    `json:"file"`
	OK           bool      `json:"ok"`
	Standard     string    `json:"standard,omitempty"`
	Interchanges int       `json:"interchanges"`
	Messages     int       `json:"messages"`
	Segments     int       `json:"segments"`
	Warnings     []Warning `json:"warnings,omitempty"`
	Error        string    `json:"error,omitempty"`
	Cause        string    `json:"cause,omitempty"`
	Code         int       `json:"code,omitempty"`
	Offset       *int64    `json:"offset,omitempty"`
	Line         int       `json:"line,omitempty"`
	Column       int       `json:"column,omitempty"`
	Segment      int       `json:"segment,omitempty"`
	Tag          string    `json:"tag,omitempty"`
}

// Report is `edifact check --json`: one document for all files.
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

// CheckResult is the result of Check on file: sum when err is nil,
// otherwise the error with the position fields of a guard or parse error.
func CheckResult(file string, sum *Summary, err error) FileResult {
	res := FileResult{File: file}
	if err == nil {
		res.OK, res.Standard = true, sum.Standard
		res.Interchanges, res.Messages, res.Segments = sum.Interchanges, sum.Messages, sum.Segments
		res.Warnings = sum.Warnings
		return res
	}
	res.Error = err.Error()
	if c, ok := err.(interface{ Cause() string }); ok {
		res.Cause = c.Cause()
	}
	var ge *GuardError
	var pe *ParseError
	switch {
	case errors.As(err, &ge):
		res.Code, res.Offset = ge.Code, &ge.Offset
	case errors.As(err, &pe):
		res.Code, res.Offset = pe.Code, &pe.Offset
		res.Line, res.Column, res.Segment, res.Tag = pe.Line, pe.Column, pe.Segment, pe.Tag
	}
	return res
}

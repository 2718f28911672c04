package edifact

import (
	"bytes"
	"io"
)

// Parse guards, reads and envelope-checks a whole input: Guard, then the
// Reader, then the interchange, group and message envelopes. The result holds
// every interchange with its messages. It never panics, runs in time linear
// in the input, and refuses inputs above Options.MaxSize before reading them.
// Every error has Cause() == "schema": a *GuardError or a *ParseError with the
// position, the segment and the code list 0085 code. Parse stops at the first
// error.
func Parse(data []byte, opts *Options) (*Document, error) {
	g, err := Guard(data, opts)
	if err != nil {
		return nil, err
	}
	o := opts.setDefaults()
	r := newReaderOptions(bytes.NewReader(g.Body), len(g.Body), &o)
	r.BaseOffset = g.Offset
	c := newChecker(g.Standard)
	c.doc.Warnings = g.Warnings
	for {
		s, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if _, ok := err.(*ParseError); !ok { // cannot happen on a bytes.Reader
				err = &ParseError{Offset: r.InputOffset(), Code: CodeUnspecified, Err: err}
			}
			return nil, err
		}
		if err := c.add(s); err != nil {
			return nil, err
		}
		if c.ic != nil && (s.Tag == "UNB" || s.Tag == "ISA") && c.ic.Segments == 1 {
			c.ic.Separators = r.Separators()
		}
	}
	if err := c.end(r.endError()); err != nil {
		return nil, err
	}
	return c.doc, nil
}

// endError is a ParseError positioned at the end of the input, to be filled in.
func (r *Reader) endError() *ParseError {
	return &ParseError{Offset: r.BaseOffset + r.off, Line: r.line, Column: int(r.off-r.lineStart) + 1, Segment: r.num + 1}
}

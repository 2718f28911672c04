package edifact

import (
	"bytes"
	"fmt"
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
	return walk(data, opts, nil)
}

// Walk checks data exactly like Parse but does not keep the messages'
// segments: fn gets each message as soon as its trailer (UNT or SE) is
// checked, and the segments are valid only during the call. Memory is then
// bounded by the largest message instead of the whole input (Parse holds
// about ten times the input size). The returned Document has every envelope
// and message header, with nil Segments.
//
// Because trailers of groups and interchanges come later, fn may see messages
// of an interchange that then fails (a wrong UNZ count): callers that need
// all or nothing run Walk with a nil fn first (a cheap validation pass), then
// again to publish. An error returned by fn stops Walk and is returned as is.
func Walk(data []byte, opts *Options, fn func(*Message) error) (*Document, error) {
	if fn == nil {
		fn = func(*Message) error { return nil }
	}
	return walk(data, opts, fn)
}

func walk(data []byte, opts *Options, fn func(*Message) error) (*Document, error) {
	return walkChecked(data, opts, fn, nil)
}

// walkChecked is Parse (fn and views nil), Walk (fn) or WalkViews (views).
func walkChecked(data []byte, opts *Options, fn func(*Message) error, views func(*Message, []byte) error) (*Document, error) {
	g, err := Guard(data, opts)
	if err != nil {
		return nil, err
	}
	o := opts.setDefaults()
	c := newChecker(g.Standard)
	c.onMessage = fn
	if fn != nil || views != nil {
		c.borrowScratch()
		defer c.returnScratch()
		c.scratch.src.Reset(g.Body)
		c.inputLen = len(g.Body)
		if views != nil {
			c.views = &viewWalk{fn: views, body: g.Body, bodyStart: g.Offset, bodyEnd: g.Offset + int64(len(g.Body)),
				maxSeg: o.MaxSegmentLen, maxElem: o.MaxElementLen}
		}
		return c.run(g, &c.scratch.src, &o)
	}
	return c.run(g, bytes.NewReader(g.Body), &o)
}

// run reads the guarded body from src through the checker.
func (c *checker) run(g *GuardResult, src io.Reader, o *Options) (*Document, error) {
	n := len(g.Body)
	if g.src != nil {
		n = int(g.end - g.Offset)
	}
	var r *Reader
	if c.scratch != nil {
		r = c.scratch.reader(src, n, o)
	} else {
		r = newReaderOptions(src, n, o)
	}
	r.BaseOffset = g.Offset
	r.ReuseSegment = true
	r.keep = &c.keep // the segments' slices go to the checker's slabs
	r.arenaHint = n  // the strings of a small input fit one arena block
	c.doc.Warnings = g.Warnings
	for {
		s, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if _, ok := err.(*ParseError); !ok && g.src == nil { // cannot happen on a bytes.Reader
				err = &ParseError{Offset: r.InputOffset(), Code: CodeUnspecified, Err: err}
			}
			return nil, err
		}
		if err := c.add(s); err != nil {
			return nil, err
		}
		if s.Tag == "UNZ" && c.ic == nil && len(c.doc.Interchanges) > 1 {
			if err := recheck(g, c.doc, r.InputOffset(), o); err != nil {
				return nil, err
			}
		}
		if c.ic != nil && (s.Tag == "UNB" || s.Tag == "ISA") && c.ic.Segments == 1 {
			c.ic.Separators = r.Separators()
		}
	}
	if err := c.end(r); err != nil {
		return nil, err
	}
	return c.doc, nil
}

// endError is a ParseError positioned at the end of the input, to be filled in.
func (r *Reader) endError() *ParseError {
	return &ParseError{Offset: r.BaseOffset + r.off, Line: r.line, Column: int(r.off-r.lineStart) + 1, Segment: r.num + 1}
}

// recheck applies the repertoire of a later interchange whose syntax
// identifier differs from the first one's (Guard only knew the first), over
// the bytes from its UNB to end. Each byte is scanned at most twice.
func recheck(g *GuardResult, doc *Document, end int64, o *Options) error {
	ic := doc.Interchanges[len(doc.Interchanges)-1]
	if ic.Syntax == g.Syntax {
		return nil
	}
	sub := &GuardResult{Offset: ic.Offset, Syntax: ic.Syntax, Separators: ic.Separators, src: g.src, end: end}
	if g.src == nil {
		sub.Body = g.Body[ic.Offset-g.Offset : end-g.Offset]
	}
	cs := lookupCharset(ic.Syntax)
	if cs == nil {
		w := Warning{Offset: ic.Offset, Code: CodeSyntaxNotSupported,
			Msg: fmt.Sprintf("syntax identifier %s is not in code list 0001", quoted(ic.Syntax, 8))}
		if !o.Lenient {
			return &GuardError{Offset: w.Offset, Code: w.Code, Msg: w.Msg}
		}
		doc.Warnings = append(doc.Warnings, w)
		cs = anyText
	}
	if err := sub.scan(o, cs); err != nil {
		return err
	}
	doc.Warnings = append(doc.Warnings, sub.Warnings...)
	return nil
}

package ubl

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Document is one parsed UBL Invoice or CreditNote.
type Document struct {
	Type     string   // TypeInvoice or TypeCreditNote
	Root     *Element // the Invoice or CreditNote element
	Elements int      // elements in the document
	Size     int64    // bytes of input
}

// Parse reads one document from r (at most lim.MaxSize bytes are read) and
// parses it: see ParseBytes.
func Parse(r io.Reader, lim *Limits) (*Document, error) {
	l := lim.setDefaults()
	data, err := io.ReadAll(io.LimitReader(r, l.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("ubl: read: %w", err)
	}
	return ParseBytes(data, lim)
}

// ParseBytes runs Guard, then encoding/xml's tokenizer in strict mode over
// the guarded bytes, building the element tree as the tokens stream by.
// Memory is bounded by the guard's limits: the tree holds at most
// MaxElements elements and the text of the input. Errors are *Error.
func ParseBytes(data []byte, lim *Limits) (*Document, error) {
	g, err := Guard(data, lim)
	if err != nil {
		return nil, err
	}
	d := xml.NewDecoder(bytes.NewReader(g.Body))
	d.Strict = true
	d.CharsetReader = func(label string, _ io.Reader) (io.Reader, error) {
		if strings.EqualFold(label, "utf-8") {
			return nil, nil
		}
		return nil, fmt.Errorf("encoding %q not supported", label)
	}
	doc := &Document{Type: g.Type, Elements: g.Elements, Size: int64(len(data))}
	var cur *Element
	var ns nsStack
	var open []xml.Name // raw names of the open elements: RawToken does not match end tags
	for {
		off := d.InputOffset()
		line, col := d.InputPos()
		tok, err := d.RawToken()
		if err == io.EOF {
			if len(open) > 0 {
				return nil, errAt(data, 0, len(data), ReasonMalformed, "not well-formed XML: unexpected EOF, element <%s> not closed", clip(open[len(open)-1].Local, 60))
			}
			break
		}
		if err != nil {
			return nil, syntaxError(data, g.Offset, err, d.InputOffset())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if cur == nil && doc.Root != nil {
				return nil, errAt(data, 0, int(g.Offset+off), ReasonMalformed, "not well-formed XML: a second root element")
			}
			ns.push(t.Attr)
			e := &Element{Name: canonical(xml.Name{Space: ns.resolve(t.Name.Space, true), Local: t.Name.Local}, cur == nil), Parent: cur, Line: line, Column: col, Offset: g.Offset + off}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
					continue
				}
				name := a.Name.Local
				switch space := ns.resolve(a.Name.Space, false); space {
				case "":
				case "http://www.w3.org/2001/XMLSchema-instance":
					name = "xsi:" + name
				default:
					name = "{" + space + "}" + name
				}
				e.Attrs = append(e.Attrs, Attr{Name: name, Value: a.Value})
			}
			if cur == nil {
				doc.Root = e
			} else {
				if len(cur.Kids) == 0 && isBlank([]byte(cur.Text)) {
					cur.Text = "" // indentation before the first child
				}
				cur.Kids = append(cur.Kids, e)
			}
			cur = e
			open = append(open, t.Name)
		case xml.EndElement:
			if len(open) == 0 || open[len(open)-1] != t.Name {
				want := ""
				if len(open) > 0 {
					want = open[len(open)-1].Local
				}
				return nil, errAt(data, 0, int(g.Offset+off), ReasonMalformed, "not well-formed XML: element <%s> closed by </%s>", clip(want, 60), clip(t.Name.Local, 60))
			}
			open = open[:len(open)-1]
			ns.pop()
			cur = cur.Parent
		case xml.CharData:
			if cur == nil {
				if !isBlank(t) {
					return nil, errAt(data, 0, int(g.Offset+off), ReasonMalformed, "not well-formed XML: text outside the root element")
				}
				continue
			}
			if len(cur.Kids) > 0 && isBlank(t) {
				continue // indentation between children
			}
			cur.Text += string(t)
		case xml.Directive:
			// the guard refuses these; a second line of defence
			return nil, errAt(data, 0, int(g.Offset+off), ReasonDoctype, "markup declaration refused")
		}
	}
	if doc.Root == nil {
		return nil, errAt(data, 0, len(data), ReasonMalformed, "no root element")
	}
	dropIndentation(doc.Root)
	number(doc.Root)
	return doc, nil
}

// dropIndentation clears the whitespace-only text of elements that have
// children (indentation), keeping the values of leaves as sent.
func dropIndentation(e *Element) {
	if len(e.Kids) > 0 && isBlank([]byte(e.Text)) {
		e.Text = ""
	}
	for _, k := range e.Kids {
		dropIndentation(k)
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// syntaxError turns a decoder error into a positioned *Error at the offset
// where the decoder stopped, which is at or just after the fault.
func syntaxError(data []byte, base int64, err error, stop int64) *Error {
	msg := err.Error()
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		msg = se.Msg
	}
	return errAt(data, 0, int(base+stop), ReasonMalformed, "not well-formed XML: %s", msg)
}

// nsStack resolves namespace prefixes (RawToken leaves them as written):
// per prefix the stack of its bindings, so a lookup costs O(1) however many
// declarations are in scope.
type nsStack struct {
	byPrefix map[string][]string // prefix ("" for the default namespace) -> URIs, innermost last
	pushed   []string            // prefixes bound, in order
	marks    []int               // len(pushed) at each open element
}

func (s *nsStack) push(attrs []xml.Attr) {
	if s.byPrefix == nil {
		s.byPrefix = map[string][]string{}
	}
	s.marks = append(s.marks, len(s.pushed))
	for _, a := range attrs {
		prefix := ""
		switch {
		case a.Name.Space == "xmlns":
			prefix = a.Name.Local
		case a.Name.Space == "" && a.Name.Local == "xmlns":
		default:
			continue
		}
		s.byPrefix[prefix] = append(s.byPrefix[prefix], a.Value)
		s.pushed = append(s.pushed, prefix)
	}
}

func (s *nsStack) pop() {
	m := s.marks[len(s.marks)-1]
	for _, p := range s.pushed[m:] {
		s.byPrefix[p] = s.byPrefix[p][:len(s.byPrefix[p])-1]
	}
	s.pushed, s.marks = s.pushed[:m], s.marks[:len(s.marks)-1]
}

// resolve returns the namespace of prefix; elements take the default
// namespace when unprefixed, attributes none. An undeclared prefix stays as
// written (as encoding/xml's Token leaves it).
func (s *nsStack) resolve(prefix string, element bool) string {
	if prefix == "" && !element {
		return ""
	}
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace"
	}
	if uris := s.byPrefix[prefix]; len(uris) > 0 {
		return uris[len(uris)-1]
	}
	return prefix
}

// canonical names an element by its namespace, whatever prefix was used.
func canonical(n xml.Name, root bool) string {
	switch n.Space {
	case NSCBC:
		return "cbc:" + n.Local
	case NSCAC:
		return "cac:" + n.Local
	case NSExt:
		return "ext:" + n.Local
	case NSInvoice, NSCreditNote:
		if root {
			return n.Local
		}
		return "ubl:" + n.Local
	}
	return "{" + n.Space + "}" + n.Local
}

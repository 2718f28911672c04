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
	var text []*strings.Builder // one per open element
	for {
		off := d.InputOffset()
		line, col := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, syntaxError(data, g.Offset, err, d.InputOffset())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if cur == nil && doc.Root != nil {
				return nil, errAt(data, 0, int(g.Offset+off), ReasonMalformed, "a second root element")
			}
			e := &Element{Name: canonical(t.Name, cur == nil), Parent: cur, Line: line, Column: col, Offset: g.Offset + off}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
					continue
				}
				name := a.Name.Local
				switch a.Name.Space {
				case "":
				case "http://www.w3.org/2001/XMLSchema-instance":
					name = "xsi:" + name
				default:
					name = "{" + a.Name.Space + "}" + name
				}
				e.Attrs = append(e.Attrs, Attr{Name: name, Value: a.Value})
			}
			if cur == nil {
				doc.Root = e
			} else {
				cur.Kids = append(cur.Kids, e)
			}
			cur = e
			text = append(text, nil)
		case xml.EndElement:
			if sb := text[len(text)-1]; sb != nil {
				cur.Text = sb.String()
			}
			text = text[:len(text)-1]
			cur = cur.Parent
		case xml.CharData:
			if cur == nil {
				if !isBlank(t) {
					return nil, errAt(data, 0, int(g.Offset+off), ReasonMalformed, "not well-formed XML: text outside the root element")
				}
				continue
			}
			sb := text[len(text)-1]
			if sb == nil {
				sb = &strings.Builder{}
				text[len(text)-1] = sb
			}
			sb.Write(t)
		case xml.Directive:
			// the guard refuses these; a second line of defence
			return nil, errAt(data, 0, int(g.Offset+off), ReasonDoctype, "markup declaration refused")
		}
	}
	if doc.Root == nil {
		return nil, errAt(data, 0, len(data), ReasonMalformed, "no root element")
	}
	dropIndentation(doc.Root)
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

package ubl

import (
	"strconv"
	"strings"
)

// Element is one element of a parsed document. Name is canonical whatever
// prefixes the sender used: "cbc:ID", "cac:Party", "ext:UBLExtensions", the
// root "Invoice" or "CreditNote"; an element of another namespace is
// "{namespace}local".
type Element struct {
	Name   string
	Attrs  []Attr // namespace declarations left out
	Text   string // character data directly inside, as sent
	Kids   []*Element
	Parent *Element
	Line   int   // of the start tag's '<'
	Column int   // byte column
	Offset int64 // byte offset in the input

	pos, of int // position among the parent's children of this name, and their count (set by the parser)
}

// Attr is one attribute; Name is the local name (UBL attributes have no
// namespace).
type Attr struct {
	Name  string
	Value string
}

// Value is the element's text with whitespace collapsed (XPath
// normalize-space), the form every rule compares.
func (e *Element) Value() string {
	if e == nil {
		return ""
	}
	return strings.Join(strings.Fields(e.Text), " ")
}

// Attr returns the value of attribute name, or "".
func (e *Element) Attr(name string) string {
	if e == nil {
		return ""
	}
	for _, a := range e.Attrs {
		if a.Name == name {
			return a.Value
		}
	}
	return ""
}

// HasAttr reports whether attribute name is present.
func (e *Element) HasAttr(name string) bool {
	if e == nil {
		return false
	}
	for _, a := range e.Attrs {
		if a.Name == name {
			return true
		}
	}
	return false
}

// Child returns the first child called name, or nil.
func (e *Element) Child(name string) *Element {
	if e == nil {
		return nil
	}
	for _, k := range e.Kids {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Children returns the children called name.
func (e *Element) Children(name string) []*Element {
	if e == nil {
		return nil
	}
	var out []*Element
	for _, k := range e.Kids {
		if k.Name == name {
			out = append(out, k)
		}
	}
	return out
}

// Find returns the first element at path (names separated by '/'), or nil.
func (e *Element) Find(path string) *Element {
	all := e.FindAll(path)
	if len(all) == 0 {
		return nil
	}
	return all[0]
}

// FindAll returns every element at path, in document order (see Select).
func (e *Element) FindAll(path string) []*Element { return e.Select(path) }

// Get returns the normalized value of the first element at path, or "".
func (e *Element) Get(path string) string { return e.Find(path).Value() }

// Walk calls fn for e and every descendant, in document order.
func (e *Element) Walk(fn func(*Element)) {
	fn(e)
	for _, k := range e.Kids {
		k.Walk(fn)
	}
}

// XPath is the element's location: /Invoice/cac:InvoiceLine[2]/cbc:ID, with
// an index where the parent has several children of that name. Its cost is
// the element's depth (positions are counted once, by the parser).
func (e *Element) XPath() string {
	if e == nil {
		return ""
	}
	var parts []string
	for x := e; x != nil; x = x.Parent {
		step := x.Name
		if x.of > 1 {
			step += "[" + strconv.Itoa(x.pos) + "]"
		}
		parts = append(parts, step)
	}
	var sb strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		sb.WriteByte('/')
		sb.WriteString(parts[i])
	}
	return sb.String()
}

// number sets pos and of below e: one pass per parent, linear in all.
func number(e *Element) {
	if len(e.Kids) == 0 {
		return
	}
	counts := make(map[string]int, len(e.Kids))
	for _, k := range e.Kids {
		counts[k.Name]++
		k.pos = counts[k.Name]
	}
	for _, k := range e.Kids {
		k.of = counts[k.Name]
		number(k)
	}
}

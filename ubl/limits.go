package ubl

import "fmt"

// Default limits. A UBL invoice of the corpus is 4-25 KB; the largest, with
// an embedded PDF, 345 KB. The limits leave room for attachments of several
// MiB while keeping the worst legal input bounded.
const (
	DefaultMaxSize       = 10 << 20 // whole document, bytes (the hub's interchange budget)
	DefaultMaxDepth      = 64       // element nesting; UBL invoices use up to about 12
	DefaultMaxElements   = 500_000  // elements in the document
	DefaultMaxAttributes = 32       // attributes (namespace declarations included) on one element
	DefaultMaxNameLen    = 256      // bytes of one element or attribute name, prefix included
	DefaultMaxTextLen    = 8 << 20  // bytes of one text node, CDATA section or attribute value
)

// Limits bound what Guard accepts; a nil *Limits or a zero field means the
// default.
type Limits struct {
	MaxSize       int64
	MaxDepth      int
	MaxElements   int
	MaxAttributes int
	MaxNameLen    int
	MaxTextLen    int
}

// Validate refuses negative limits.
func (l *Limits) Validate() error {
	if l == nil {
		return nil
	}
	if l.MaxSize < 0 || l.MaxDepth < 0 || l.MaxElements < 0 || l.MaxAttributes < 0 || l.MaxNameLen < 0 || l.MaxTextLen < 0 {
		return fmt.Errorf("ubl limits: negative value in %+v", *l)
	}
	return nil
}

// setDefaults returns a copy with every zero field set to its default.
func (l *Limits) setDefaults() Limits {
	var c Limits
	if l != nil {
		c = *l
	}
	if c.MaxSize == 0 {
		c.MaxSize = DefaultMaxSize
	}
	if c.MaxDepth == 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.MaxElements == 0 {
		c.MaxElements = DefaultMaxElements
	}
	if c.MaxAttributes == 0 {
		c.MaxAttributes = DefaultMaxAttributes
	}
	if c.MaxNameLen == 0 {
		c.MaxNameLen = DefaultMaxNameLen
	}
	if c.MaxTextLen == 0 {
		c.MaxTextLen = DefaultMaxTextLen
	}
	return c
}

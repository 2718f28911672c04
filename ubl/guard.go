package ubl

import (
	"bytes"
	"unicode/utf8"
)

// Namespaces of the UBL 2.1 documents and components this package reads.
const (
	NSInvoice    = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
	NSCreditNote = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
	NSCBC        = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
	NSCAC        = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
	NSExt        = "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"
)

// Document types, as the hub names them in subjects (edi.parsed.<partner>.INVOICE).
const (
	TypeInvoice    = "INVOICE"
	TypeCreditNote = "CREDITNOTE"
)

var bomUTF8 = []byte{0xEF, 0xBB, 0xBF}

// GuardResult is what Guard learned without parsing.
type GuardResult struct {
	Type     string // TypeInvoice or TypeCreditNote
	Body     []byte // the input without a UTF-8 BOM; aliases the input
	Offset   int64  // offset of Body[0] in the input (3 after a BOM)
	Elements int    // elements counted
	MaxDepth int    // deepest nesting seen
}

// IsUBL reports whether data looks like a UBL 2 Invoice or CreditNote: the
// root element, after an optional BOM, XML declaration, comments and
// processing instructions, is Invoice or CreditNote in its UBL namespace.
// It reads at most the first 64 KiB and checks nothing else: Guard does.
func IsUBL(data []byte) bool {
	if len(data) > 64<<10 {
		data = data[:64<<10]
	}
	_, err := rootType(data, bytes.HasPrefix(data, bomUTF8))
	return err == nil
}

// Guard is the bounded check that runs before the parser: one pass over the
// bytes, no allocation proportional to the input. It enforces every field of
// lim, refuses invalid UTF-8, characters XML forbids, a UTF-16 or non-UTF-8
// document, any DOCTYPE or other markup declaration (so no DTD, no external
// entity, no entity expansion ever reaches a parser), and requires the root
// element to be a UBL 2 Invoice or CreditNote by its namespace. Errors are
// *Error with the position of the offending byte.
func Guard(data []byte, lim *Limits) (*GuardResult, error) {
	if err := lim.Validate(); err != nil {
		return nil, &Error{Reason: ReasonSize, Line: 1, Column: 1, Msg: err.Error()}
	}
	l := lim.setDefaults()
	if int64(len(data)) > l.MaxSize {
		e := errAt(data, 0, int(l.MaxSize), ReasonSize, "document is %d bytes, over the limit of %d", len(data), l.MaxSize)
		return nil, e
	}
	start := 0
	switch {
	case bytes.HasPrefix(data, bomUTF8):
		start = 3
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}), bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return nil, errAt(data, 0, 0, ReasonEncoding, "document is UTF-16 (byte order mark); UBL must be sent as UTF-8")
	}
	if bad := invalidChar(data[start:]); bad >= 0 {
		return nil, errAt(data, 0, start+bad, ReasonUTF8, "invalid UTF-8 or a control character XML forbids")
	}
	typ, err := rootType(data, start == 3)
	if err != nil {
		return nil, err
	}
	s := scanner{data: data, l: &l}
	if err := s.scan(start); err != nil {
		return nil, err
	}
	return &GuardResult{Type: typ, Body: data[start:], Offset: int64(start), Elements: s.elements, MaxDepth: s.maxDepth}, nil
}

// invalidChar returns the offset of the first byte that is not UTF-8 or is a
// C0 control other than TAB, LF, CR, or -1.
func invalidChar(b []byte) int {
	if utf8.Valid(b) { // the common case: a byte loop, no rune decoding
		for i, c := range b {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return i
			}
		}
		if i := bytes.Index(b, []byte("\xEF\xBF\xBE")); i >= 0 { // U+FFFE
			return i
		}
		return bytes.Index(b, []byte("\xEF\xBF\xBF")) // U+FFFF, or -1
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 || r == 0xFFFE || r == 0xFFFF {
			return i
		}
		i += n
	}
	return -1
}

// scanner is the guard's tokenizer: it finds markup boundaries and counts,
// nothing more. Well-formedness (matching end tags, attribute syntax,
// entities) is the parser's; the scanner only has to be right about where
// markup starts and ends so that its counts are true.
type scanner struct {
	data     []byte
	l        *Limits
	depth    int
	maxDepth int
	elements int
}

func (s *scanner) fail(off int, reason, format string, args ...any) error {
	return errAt(s.data, 0, off, reason, format, args...)
}

func (s *scanner) scan(i int) error {
	d := s.data
	for i < len(d) {
		lt := bytes.IndexByte(d[i:], '<')
		if lt < 0 {
			lt = len(d) - i
		}
		if lt > s.l.MaxTextLen {
			return s.fail(i+s.l.MaxTextLen, ReasonText, "text node longer than the limit of %d bytes", s.l.MaxTextLen)
		}
		i += lt
		if i >= len(d) {
			return nil
		}
		var err error
		switch rest := d[i:]; {
		case bytes.HasPrefix(rest, []byte("<?")):
			i, err = s.skipTo(i, "?>", "processing instruction")
		case bytes.HasPrefix(rest, []byte("<!--")):
			i, err = s.skipTo(i, "-->", "comment")
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			end := bytes.Index(rest, []byte("]]>"))
			switch {
			case end < 0:
				return s.fail(i, ReasonMalformed, "CDATA section never ends")
			case end-9 > s.l.MaxTextLen:
				return s.fail(i+9+s.l.MaxTextLen, ReasonText, "CDATA section longer than the limit of %d bytes", s.l.MaxTextLen)
			}
			i += end + 3
		case bytes.HasPrefix(rest, []byte("<!DOCTYPE")):
			return s.fail(i, ReasonDoctype, "DOCTYPE refused: a document type declaration can define entities (external entities, entity expansion); UBL needs none")
		case bytes.HasPrefix(rest, []byte("<!")):
			return s.fail(i, ReasonDoctype, "markup declaration refused: only comments and CDATA may start with <!")
		case bytes.HasPrefix(rest, []byte("</")):
			i, err = s.endTag(i)
		default:
			i, err = s.startTag(i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *scanner) skipTo(i int, end, what string) (int, error) {
	j := bytes.Index(s.data[i:], []byte(end))
	if j < 0 {
		return 0, s.fail(i, ReasonMalformed, "%s never ends", what)
	}
	return i + j + len(end), nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// name returns the end of the name starting at i, enforcing MaxNameLen.
func (s *scanner) name(i int) (int, error) {
	j := i
	for j < len(s.data) {
		c := s.data[j]
		if isSpace(c) || c == '>' || c == '/' || c == '=' || c == '<' || c == '"' || c == '\'' {
			break
		}
		j++
		if j-i > s.l.MaxNameLen {
			return 0, s.fail(i, ReasonName, "name longer than the limit of %d bytes", s.l.MaxNameLen)
		}
	}
	if j == i {
		return 0, s.fail(i, ReasonMalformed, "name expected")
	}
	return j, nil
}

func (s *scanner) endTag(i int) (int, error) {
	j, err := s.name(i + 2)
	if err != nil {
		return 0, err
	}
	k := bytes.IndexByte(s.data[j:], '>')
	if k < 0 {
		return 0, s.fail(i, ReasonMalformed, "end tag never ends")
	}
	s.depth--
	return j + k + 1, nil
}

func (s *scanner) startTag(i int) (int, error) {
	s.elements++
	if s.elements > s.l.MaxElements {
		return 0, s.fail(i, ReasonElements, "more than the limit of %d elements", s.l.MaxElements)
	}
	s.depth++
	if s.depth > s.l.MaxDepth {
		return 0, s.fail(i, ReasonDepth, "elements nested deeper than the limit of %d", s.l.MaxDepth)
	}
	if s.depth > s.maxDepth {
		s.maxDepth = s.depth
	}
	d := s.data
	j, err := s.name(i + 1)
	if err != nil {
		return 0, err
	}
	attrs := 0
	for {
		for j < len(d) && isSpace(d[j]) {
			j++
		}
		switch {
		case j >= len(d):
			return 0, s.fail(i, ReasonMalformed, "start tag never ends")
		case d[j] == '>':
			return j + 1, nil
		case d[j] == '/' && j+1 < len(d) && d[j+1] == '>':
			s.depth--
			return j + 2, nil
		}
		attrs++
		if attrs > s.l.MaxAttributes {
			return 0, s.fail(j, ReasonAttributes, "more than the limit of %d attributes on one element", s.l.MaxAttributes)
		}
		if j, err = s.name(j); err != nil {
			return 0, err
		}
		for j < len(d) && isSpace(d[j]) {
			j++
		}
		if j >= len(d) || d[j] != '=' {
			return 0, s.fail(j, ReasonMalformed, "attribute without a value")
		}
		j++
		for j < len(d) && isSpace(d[j]) {
			j++
		}
		if j >= len(d) || d[j] != '"' && d[j] != '\'' {
			return 0, s.fail(j, ReasonMalformed, "attribute value not quoted")
		}
		q := bytes.IndexByte(d[j+1:], d[j])
		if q < 0 {
			return 0, s.fail(j, ReasonMalformed, "attribute value never ends")
		}
		if q > s.l.MaxTextLen {
			return 0, s.fail(j+1+s.l.MaxTextLen, ReasonText, "attribute value longer than the limit of %d bytes", s.l.MaxTextLen)
		}
		j += q + 2
	}
}

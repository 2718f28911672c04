package ubl

import (
	"bytes"
	"strings"

	"github.com/edihub/edihub/escape"
)

// rootType finds the root element of data (skipping a BOM, the XML
// declaration, whitespace, comments and processing instructions) and returns
// TypeInvoice or TypeCreditNote from its local name and namespace. The
// namespace must be declared on the root itself, as it has no ancestor.
func rootType(data []byte, bom bool) (string, error) {
	i := 0
	if bom {
		i = 3
	}
	for {
		for i < len(data) && isSpace(data[i]) {
			i++
		}
		rest := data[i:]
		switch {
		case len(rest) == 0:
			return "", errAt(data, 0, i, ReasonNotUBL, "no root element")
		case bytes.HasPrefix(rest, []byte("<?xml")) && len(rest) > 5 && (isSpace(rest[5]) || rest[5] == '?'):
			end := bytes.Index(rest, []byte("?>"))
			if end < 0 {
				return "", errAt(data, 0, i, ReasonMalformed, "XML declaration never ends")
			}
			if enc := declAttr(rest[5:end], "encoding"); enc != "" && !strings.EqualFold(enc, "UTF-8") {
				return "", errAt(data, 0, i, ReasonEncoding, "declared encoding %q: UBL must be sent as UTF-8", clip(enc, 40))
			}
			i += end + 2
		case bytes.HasPrefix(rest, []byte("<?")):
			end := bytes.Index(rest, []byte("?>"))
			if end < 0 {
				return "", errAt(data, 0, i, ReasonMalformed, "processing instruction never ends")
			}
			i += end + 2
		case bytes.HasPrefix(rest, []byte("<!--")):
			end := bytes.Index(rest[4:], []byte("-->"))
			if end < 0 {
				return "", errAt(data, 0, i, ReasonMalformed, "comment never ends")
			}
			i += 4 + end + 3
		case bytes.HasPrefix(rest, []byte("<!DOCTYPE")):
			return "", errAt(data, 0, i, ReasonDoctype, "DOCTYPE refused: a document type declaration can define entities (external entities, entity expansion); UBL needs none")
		case rest[0] == '<' && len(rest) > 1 && rest[1] != '!' && rest[1] != '/':
			return rootOf(data, i)
		default:
			return "", errAt(data, 0, i, ReasonNotUBL, "document does not start with an XML element")
		}
	}
}

// rootOf reads the root start tag at i: its qualified name and the namespace
// declaration of its prefix.
func rootOf(data []byte, i int) (string, error) {
	end := bytes.IndexByte(data[i:], '>')
	if end < 0 || end > 64<<10 {
		return "", errAt(data, 0, i, ReasonMalformed, "root start tag never ends")
	}
	tag := data[i+1 : i+end]
	n := 0
	for n < len(tag) && !isSpace(tag[n]) && tag[n] != '/' {
		n++
	}
	qname := string(tag[:n])
	prefix, local := "", qname
	if c := strings.IndexByte(qname, ':'); c >= 0 {
		prefix, local = qname[:c], qname[c+1:]
	}
	attr := "xmlns"
	if prefix != "" {
		attr = "xmlns:" + prefix
	}
	ns := declAttr(tag[n:], attr)
	switch {
	case local == "Invoice" && ns == NSInvoice:
		return TypeInvoice, nil
	case local == "CreditNote" && ns == NSCreditNote:
		return TypeCreditNote, nil
	}
	if ns == "" {
		return "", errAt(data, 0, i, ReasonNotUBL, "root element %q has no namespace: not a UBL 2 Invoice or CreditNote", clip(qname, 60))
	}
	return "", errAt(data, 0, i, ReasonNotUBL, "root element %q in namespace %q: not a UBL 2 Invoice or CreditNote", clip(qname, 60), clip(ns, 100))
}

// declAttr returns the value of attribute name in the attribute text b, or "".
func declAttr(b []byte, name string) string {
	for i := 0; i < len(b); {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		j := i
		for j < len(b) && !isSpace(b[j]) && b[j] != '=' {
			j++
		}
		key := string(b[i:j])
		for j < len(b) && (isSpace(b[j]) || b[j] == '=') {
			j++
		}
		if j >= len(b) || b[j] != '"' && b[j] != '\'' {
			return ""
		}
		q := bytes.IndexByte(b[j+1:], b[j])
		if q < 0 {
			return ""
		}
		if key == name {
			return string(b[j+1 : j+1+q])
		}
		i = j + q + 2
	}
	return ""
}

// clip bounds s for a message (the message is escaped where it is shown).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return escape.Cut(s, n) + "..."
}

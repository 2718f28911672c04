// Package ubl reads UBL 2.1 e-invoices (Invoice-2 and CreditNote-2, as
// EN 16931 and Peppol BIS Billing 3.0 use them) so that a partner's XML can
// never crash, hang or exhaust the hub, and tells what is wrong with one by
// the rule ids of the published rule sets. It imports the standard library,
// escape and wire only.
//
// # Layers
//
// Guard is the bounded first look, one pass over the bytes before any
// parser: the size limit, UTF-8 only (a BOM is skipped, UTF-16 and other
// declared encodings refused), invalid UTF-8 and the control characters XML
// forbids, any DOCTYPE or other markup declaration (so no DTD, no external
// entity, no entity expansion), the nesting depth, the element count, the
// attributes of one element, name lengths and text lengths (Limits). The
// root element must be Invoice or CreditNote in its UBL namespace, whatever
// its prefix. A refusal is an *Error with a Reason and the line, column and
// byte offset of the offending byte. IsUBL is the cheap content sniff that
// says whether a payload is UBL at all.
package ubl

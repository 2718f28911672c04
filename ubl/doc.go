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

// ParseBytes (Parse for an io.Reader) runs Guard, then encoding/xml's
// tokenizer in strict mode, building a tree of Elements as the tokens
// stream by: canonical names ("cbc:ID", "cac:Party", root "Invoice") whatever
// the prefixes, attributes, text, and the line, column and byte offset of
// each start tag. Memory is bounded by the guard's limits. Document.View and
// Document.JSON give the JSON view: the EN 16931 business terms keyed by BT
// id (bt.go is the mapping to UBL paths), the groups BG-20, BG-21, BG-23,
// BG-24, BG-25 as arrays, and the full document as an element tree.
// Document.LedgerKey is "TYPE|seller endpoint|BT-1|BT-2".
//
// Validation is linear in the document (sums, rates and sibling positions
// are computed once) and returns at most MaxFindings findings, then one
// LIMIT warning; TestValidationIsLinear checks it by allocations.
//
// # Validation
//
// Document.Validate returns Findings: rule id, severity (fatal or warning,
// as the rule sets flag them), XPath, line, column, message. Options choose
// the Strictness (strict, the default; lenient makes BR-CL-* warnings; off)
// and the Profile (en16931; peppol adds the Peppol BIS 3 subset). Check is
// guard + parse + validate in one call, Cause maps fatal findings to the
// hub's DLQ causes (schema, business, partner-rejected), MLR builds the
// Peppol Message Level Response naming the failed rules, WriteOutline prints
// the document one element a line with its XPath and the failing rules
// marked (for dlq show).
//
// Implemented, each as its assertion in the EN 16931 UBL schematron 1.3.16
// states it (including XPath's handling of missing values):
//
//   - XSD: the content models (order, minOccurs/maxOccurs, unknown elements)
//     of every element an Invoice or CreditNote can hold, generated from the
//     OASIS UBL 2.1 schema (schema_tables.go), and the lexical space of the
//     data types (decimal, date, time, boolean) with their required
//     attributes (currencyID, unitCode, mimeCode). Extension content
//     (xsd:any, lax) is not checked; facets of xsd:normalizedString are not.
//   - Core: BR-01..BR-12, BR-13..BR-33, BR-36..BR-38, BR-41..BR-57, BR-61..BR-65,
//     BR-CO-03, -04, -09, -18..-24, -26, BR-DEC-01..-28 (BR-CO-05..-08 are
//     true() and BR-DEC-13/15 as written never fail: left out).
//   - Calculations: BR-CO-10..BR-CO-17 with exact decimals and the rules'
//     round(x*100) div 100, half toward +infinity.
//   - VAT categories S, Z, E, AE, K (BR-IC-01..12), G, O (BR-O-01..14):
//     -01..-10 each.
//   - Code lists BR-CL-01, 03..07, 10, 11, 13..26 (lists generated from the
//     schematron, code_lists.go). Not BR-CL-08 (subject codes of notes).
//   - UBL syntax: UBL-SR-01..56 (all 54), UBL-DT-01, -06, -07, UBL-CR-666, -673 (the two
//     fatal UBL-CR rules).
//   - Peppol BIS 3 (ProfilePeppol): PeppolRules.
//
// Not implemented: the VAT categories L and M (BR-AF-*, BR-AG-*) and B
// (BR-B-*, Italian split payment); BR-CL-08; the UBL-CR-* warnings (674) and
// UBL-DT-08..28; the Peppol national rules, PEPPOL-COMMON
// identifier checks and the other PEPPOL-EN16931 rules. The corpus
// (../shared/ubl) expects none of these: TestConformance passes every valid
// document, finds every expected rule in every invalid one, reports for the
// 13 complete documents exactly the fatal rules the official artefacts
// report, for the 20 fragments none they do not report, and for the Peppol
// subset exactly what the Peppol artefacts report.

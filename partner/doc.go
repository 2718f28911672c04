// Package partner owns partner agreements: the profiles (from the config's
// partners: section and/or one YAML file per partner in a folder), their
// reload on SIGHUP, what the built-in parse stage decides with them
// (partner-rejected, signature-invalid, business), the business rules (CEL
// over the JSON view, and built-in ones), Ed25519 signing of payloads, and
// the acknowledgements sent back to partners (EDIFACT CONTRL syntax 3 and
// 4, APERAK, X12 TA1, 997 and 999, and the Peppol MLR to a UBL document)
// on edi.outbound.<partner>.<type> in the OUTBOUND stream. A profile's ubl:
// section agrees a partner's UBL invoices (ubl.go, parse.UBLAgreements).
//
// The partner a profile applies to is always the one the hub computed from
// the subject the interchange was stored under, never one read from the
// message.
//
// It may import wire, escape, jetstream, edifact, edifact/directory
// (directory validation per profile) and ubl; the hub reaches it
// through the small interface parse.Agreements (package parse), wired
// in cmd/edihub.
package partner

package ubl

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// Peppol Message Level Response 3.0 (a UBL 2.1 ApplicationResponse).
const (
	MLRCustomizationID = "urn:fdc:peppol.eu:poacc:trns:mlr:3"
	MLRProfileID       = "urn:fdc:peppol.eu:poacc:bis:mlr:3"
	nsApplicationResp  = "urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2"
)

// Endpoint is a Peppol participant: scheme (EAS, e.g. 0088) and identifier.
type Endpoint struct {
	Scheme string
	ID     string
}

// MLRInput is everything an MLR says; the builder reads no clock and no
// state, so the hub chooses the id and the date (and a test can fix them).
type MLRInput struct {
	ID          string   // the response's own identifier
	IssueDate   string   // YYYY-MM-DD
	IssueTime   string   // hh:mm:ss, optional
	Sender      Endpoint // who sends the response (the hub's receiving party)
	Receiver    Endpoint // who gets it (the invoice's sender)
	ReferenceID string   // the document responded to: its BT-1, or the transmission id
	Findings    []Finding
	Refusal     *Error // set when the document was refused before validation
}

// MLR builds the Message Level Response for a validated (or refused)
// document: response code RE (rejected) if a finding is fatal or the
// document was refused, else AP (accepted); one LineResponse per finding,
// its LineID the XPath of the element, its status reason BV (business rule
// violation, fatal), BW (business rule warning) or SV (syntax violation:
// XSD and refusals), its description "[rule id] message".
func MLR(in MLRInput) ([]byte, error) {
	if in.ID == "" || in.IssueDate == "" || in.ReferenceID == "" || in.Sender.ID == "" || in.Receiver.ID == "" {
		return nil, fmt.Errorf("ubl: MLR needs ID, IssueDate, ReferenceID, Sender and Receiver")
	}
	if !isDate(in.IssueDate) || in.IssueTime != "" && !isTime(in.IssueTime) {
		return nil, fmt.Errorf("ubl: MLR issue date %q / time %q", in.IssueDate, in.IssueTime)
	}
	rejected := in.Refusal != nil || HasFatal(in.Findings)
	code, desc := "AP", "Accepted"
	if rejected {
		code, desc = "RE", "Rejected: "+strings.Join(append(refusalRule(in.Refusal), FailedRules(in.Findings)...), " ")
	}
	var b bytes.Buffer
	w := func(depth int, format string, args ...any) {
		b.WriteString(strings.Repeat("  ", depth))
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w(0, `<ApplicationResponse xmlns="%s" xmlns:cac="%s" xmlns:cbc="%s">`, nsApplicationResp, NSCAC, NSCBC)
	w(1, "<cbc:CustomizationID>%s</cbc:CustomizationID>", MLRCustomizationID)
	w(1, "<cbc:ProfileID>%s</cbc:ProfileID>", MLRProfileID)
	w(1, "<cbc:ID>%s</cbc:ID>", esc(in.ID))
	w(1, "<cbc:IssueDate>%s</cbc:IssueDate>", in.IssueDate)
	if in.IssueTime != "" {
		w(1, "<cbc:IssueTime>%s</cbc:IssueTime>", in.IssueTime)
	}
	for _, p := range []struct {
		tag string
		e   Endpoint
	}{{"cac:SenderParty", in.Sender}, {"cac:ReceiverParty", in.Receiver}} {
		w(1, "<%s>", p.tag)
		w(2, `<cbc:EndpointID schemeID="%s">%s</cbc:EndpointID>`, esc(p.e.Scheme), esc(p.e.ID))
		w(1, "</%s>", p.tag)
	}
	w(1, "<cac:DocumentResponse>")
	w(2, "<cac:Response>")
	w(3, "<cbc:ResponseCode>%s</cbc:ResponseCode>", code)
	w(3, "<cbc:Description>%s</cbc:Description>", esc(desc))
	w(2, "</cac:Response>")
	w(2, "<cac:DocumentReference>")
	w(3, "<cbc:ID>%s</cbc:ID>", esc(in.ReferenceID))
	w(2, "</cac:DocumentReference>")
	line := func(xpath, lineCode, reason, text string) {
		w(2, "<cac:LineResponse>")
		w(3, "<cac:LineReference>")
		w(4, "<cbc:LineID>%s</cbc:LineID>", esc(xpath))
		w(3, "</cac:LineReference>")
		w(3, "<cac:Response>")
		w(4, `<cbc:ResponseCode listID="UNCL4343OpSubset">%s</cbc:ResponseCode>`, lineCode)
		w(4, "<cbc:Description>%s</cbc:Description>", esc(text))
		w(4, "<cac:Status>")
		w(5, `<cbc:StatusReasonCode listID="PEPPOLSTATUS">%s</cbc:StatusReasonCode>`, reason)
		w(4, "</cac:Status>")
		w(3, "</cac:Response>")
		w(2, "</cac:LineResponse>")
	}
	if e := in.Refusal; e != nil {
		line("NA", "RE", "SV", fmt.Sprintf("[%s] %s (line %d, column %d)", e.Rule(), e.Msg, e.Line, e.Column))
	}
	for _, f := range in.Findings {
		lineCode, reason := "RE", "BV"
		switch {
		case f.Rule == "XSD":
			reason = "SV"
		case f.Severity == Warning:
			lineCode, reason = "AB", "BW"
		}
		line(f.XPath, lineCode, reason, "["+f.Rule+"] "+f.Message)
	}
	w(1, "</cac:DocumentResponse>")
	w(0, "</ApplicationResponse>")
	return b.Bytes(), nil
}

func refusalRule(e *Error) []string {
	if e == nil {
		return nil
	}
	return []string{e.Rule()}
}

// esc escapes text for XML content and attributes.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

package parse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/ubl"
	"github.com/edihub/edihub/wire"
)

// UBLAgreements are Agreements that also agree UBL documents
// (partner.Registry: a profile's ubl: section and ack.mlr).
type UBLAgreements interface {
	// UBLOptions are the partner's validation options (strictness,
	// profile); nil: the defaults (strict, en16931).
	UBLOptions(partner string) *ubl.Options
	// UBLDocument is asked of each parsed document before validation: the
	// CustomizationID, ProfileID and sender endpoint the profile agrees.
	// A refusal says its cause (partner-rejected) and headers.
	UBLDocument(partner string, doc *ubl.Document) error
	// MLRs build the Message Level Responses agreed for the decision
	// (failure nil: accepted; doc nil: refused before it parsed),
	// numbered from ref (0: the INGEST sequence of origin). They send
	// nothing.
	MLRs(partner, origin, corr string, doc *ubl.Document, findings []ubl.Finding, failure error, ref uint64) []*nats.Msg
}

// LooksXML is the one check the EDIFACT path pays: the first byte after a
// UTF-8 BOM and white space is '<' (an EDIFACT or X12 interchange starts
// with UNA, UNB or ISA). Any XML goes to the UBL guard, which names what
// it is not (NOT-UBL, DOCTYPE, ...) instead of the EDIFACT guard's "no UNB".
func LooksXML(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	for i := 0; i < len(data) && i < 1024; i++ {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			continue
		case '<':
			return true
		}
		return false
	}
	return false
}

// UBLRefusal is a UBL document refused by its findings (or by the guard or
// parser: Err). Its dead letter names the fatal rule ids (x-rule) and where
// the first failed (x-rule-xpath).
type UBLRefusal struct {
	DLQCause string
	Findings []ubl.Finding // fatal ones first; nil when Err is set
	Err      *ubl.Error
}

// maxHeaderRules bounds the rule ids listed in x-rule.
const maxHeaderRules = 8

func (r *UBLRefusal) fatal() []ubl.Finding {
	var out []ubl.Finding
	for _, f := range r.Findings {
		if f.Severity == ubl.Fatal {
			out = append(out, f)
		}
	}
	return out
}

func (r *UBLRefusal) Error() string {
	if r.Err != nil {
		return r.Err.Error()
	}
	fs := r.fatal()
	if len(fs) == 0 {
		return r.DLQCause + ": UBL document refused"
	}
	msg := r.DLQCause + ": " + fs[0].String()
	if len(fs) > 1 {
		msg += fmt.Sprintf("; and %d more fatal findings", len(fs)-1)
	}
	return msg
}

// Cause is the DLQ cause (hub.Causer).
func (r *UBLRefusal) Cause() string { return r.DLQCause }

// Unwrap is the guard's or parser's error, if any.
func (r *UBLRefusal) Unwrap() error {
	if r.Err == nil {
		return nil
	}
	return r.Err
}

// FailureHeaders are x-rule (the fatal rule ids, distinct, at most
// maxHeaderRules, space-separated; the guard's pseudo rule DOCTYPE,
// XML-WF, XML-LIMIT or NOT-UBL for a refusal) and x-rule-xpath.
func (r *UBLRefusal) FailureHeaders() map[string]string {
	if r.Err != nil { // its position is in the message (line, column, offset)
		return map[string]string{wire.HdrRule: r.Err.Rule()}
	}
	fs := r.fatal()
	if len(fs) == 0 {
		return nil
	}
	var ids []string
	for _, f := range fs {
		if len(ids) == maxHeaderRules {
			break
		}
		if !containsString(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	return map[string]string{wire.HdrRule: escape.Header(strings.Join(ids, " ")),
		wire.HdrRuleXPath: escape.Header(fs[0].XPath + " " + strconv.Itoa(fs[0].Line) + ":" + strconv.Itoa(fs[0].Column))}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// decideUBL is Decide for a UBL document: Admit, the guard and the parser
// (schema), the profile's UBLDocument (partner-rejected), validation with
// the profile's options (ubl.Cause: schema, business or partner-rejected),
// one JSON view on edi.parsed.<partner>.INVOICE or .CREDITNOTE, the ledger.
func (w With) decideUBL(ctx context.Context, in *Input, d *Decision) (*ubl.Document, []ubl.Finding, error) {
	d.Standard = wire.StandardUBL
	opts := w.Config.Options(in.Partner)
	if w.Options != nil {
		o := *w.Options
		opts = &o
	}
	ags := w.Agreements
	if ags != nil {
		if err := ags.Admit(in.Partner, in.Header, in.Data, opts); err != nil {
			return nil, nil, permanent(err)
		}
	}
	doc, err := ubl.ParseBytes(in.Data, &ubl.Limits{MaxSize: opts.MaxSize})
	if err != nil {
		var ue *ubl.Error
		if errors.As(err, &ue) {
			return nil, nil, hub.PermanentError(wire.CauseSchema, &UBLRefusal{DLQCause: wire.CauseSchema, Err: ue})
		}
		return nil, nil, permanent(err)
	}
	d.Messages, d.Types = 1, []string{doc.Type}
	d.MessageID = doc.Root.Get("cbc:ID")
	var vopts *ubl.Options
	if ua, ok := ags.(UBLAgreements); ok {
		if err := ua.UBLDocument(in.Partner, doc); err != nil {
			return doc, nil, permanent(err)
		}
		vopts = ua.UBLOptions(in.Partner)
	}
	if err := ctx.Err(); err != nil {
		return doc, nil, err
	}
	findings := doc.Validate(vopts)
	if ubl.HasFatal(findings) {
		cause := ubl.Cause(findings)
		return doc, findings, hub.PermanentError(cause, &UBLRefusal{DLQCause: cause, Findings: findings})
	}
	var body bytes.Buffer
	if err := doc.JSON(&body); err != nil {
		return doc, findings, hub.PermanentError(wire.CauseSchema, fmt.Errorf("UBL %s: JSON view: %w", doc.Type, err))
	}
	h := make(nats.Header, parsedHeaders+1+len(in.Carry))
	for k, vs := range in.Carry {
		h[k] = vs
	}
	h.Set(wire.HdrPartnerID, in.Partner)
	h.Set(wire.HdrMessageID, escape.Header(d.MessageID))
	h.Set(wire.HdrMessageRef, escape.Header(d.MessageID))
	h.Set(wire.HdrMessageType, doc.Type)
	h.Set(wire.HdrStandard, wire.StandardUBL)
	h.Set(wire.HdrOriginalSeq, strconv.FormatUint(in.Seq, 10))
	h.Set(wire.HdrCorrelationID, in.correlation())
	d.Outputs = []*nats.Msg{{Subject: wire.ParsedSubject(in.Partner, wire.SubjectToken(doc.Type)), Header: h, Data: body.Bytes()}}
	d.Keys = []LedgerKey{UBLLedgerKey(in.Partner, doc)}
	if w.Ledger != nil {
		if err := checkLedger(w.Ledger, in, d.Keys); err != nil {
			return doc, findings, err
		}
	}
	return doc, findings, nil
}

// UBLLedgerKey names a UBL document in the ledger within its partner: the
// seller's endpoint (Sender, scheme:id as BT-34 gives it) and the key of
// ubl.Document.LedgerKey (type, seller, invoice number BT-1, issue date
// BT-2) as its control reference, so the partner sending the same
// invoice again is a duplicate and another seller's same number is not.
func UBLLedgerKey(partner string, doc *ubl.Document) LedgerKey {
	seller := ""
	if e := doc.Root.Find("cac:AccountingSupplierParty/cac:Party/cbc:EndpointID"); e != nil {
		seller = e.Attr("schemeID") + ":" + e.Value()
	}
	return LedgerKey{Partner: partner, Sender: seller, ControlRef: doc.LedgerKey()}
}

// ublAcks are the MLRs the agreements build for a UBL decision.
func ublAcks(w With, in *Input, doc *ubl.Document, findings []ubl.Finding, err error) []*nats.Msg {
	ua, ok := w.Agreements.(UBLAgreements)
	if !ok {
		return nil
	}
	var f *hub.Failure
	switch {
	case err == nil:
		return ua.MLRs(in.Partner, in.origin(), in.correlation(), doc, findings, nil, in.AckRef)
	case errors.As(err, &f) && f.Class == hub.Permanent:
		return ua.MLRs(in.Partner, in.origin(), in.correlation(), doc, findings, err, in.AckRef)
	}
	return nil
}

package partner

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/ubl"
	"github.com/edihub/edihub/wire"
)

// UBLConfig is a profile's ubl: section, the agreement on the partner's
// UBL 2.1 invoices and credit notes (parse.UBLAgreements).
type UBLConfig struct {
	// Strictness of validation: strict (default), lenient (code list
	// findings are warnings) or off (guard and parse only).
	Strictness string `yaml:"strictness"`
	// Profile is the rule set: en16931 (default) or peppol (adds the
	// Peppol BIS Billing 3.0 rules).
	Profile string `yaml:"profile"`
	// CustomizationIDs and ProfileIDs are the BT-24 and BT-23 values
	// agreed; empty: any.
	CustomizationIDs []string `yaml:"customization_ids"`
	ProfileIDs       []string `yaml:"profile_ids"`
	// Senders are the seller endpoints (BT-34) the partner may use, each
	// "SCHEME:ID" (0088:7300010000001); empty: any.
	Senders []string `yaml:"senders"`
	// Endpoint is ours, "SCHEME:ID": the sender of the MLRs when the
	// document names no buyer endpoint (BT-49) or was refused unread.
	Endpoint string `yaml:"endpoint"`
}

func (c *UBLConfig) compile() error {
	s, err := ubl.ParseStrictness(c.Strictness)
	if err != nil {
		return err
	}
	c.Strictness = string(s)
	switch c.Profile {
	case "":
		c.Profile = ubl.ProfileEN16931
	case ubl.ProfileEN16931, ubl.ProfilePeppol:
	default:
		return fmt.Errorf("profile %q: want en16931 or peppol", c.Profile)
	}
	for _, e := range append(slices.Clone(c.Senders), cmp.Or(c.Endpoint, "x:x")) {
		if sch, id, ok := strings.Cut(e, ":"); !ok || sch == "" || id == "" {
			return fmt.Errorf("endpoint %q: want SCHEME:ID, e.g. 0088:7300010000001", e)
		}
	}
	return nil
}

// UBLOptions are the partner's validation options (parse.UBLAgreements);
// nil for a partner without a profile (the defaults).
func (r *Registry) UBLOptions(partner string) *ubl.Options {
	p, ok := r.Set().Get(partner)
	if !ok {
		return nil
	}
	return &ubl.Options{Strictness: ubl.Strictness(p.UBL.Strictness), Profile: p.UBL.Profile}
}

// UBLDocument refuses a document whose CustomizationID, ProfileID or
// seller endpoint the partner's profile does not agree (partner-rejected,
// x-reject-reason ubl-profile-not-agreed, x-rule naming the business term).
func (r *Registry) UBLDocument(partner string, doc *ubl.Document) error {
	p, ok := r.Set().Get(partner)
	if !ok {
		return nil
	}
	c := p.UBL
	reject := func(term, what, got string) error {
		return &Rejection{DLQCause: wire.CausePartnerRejected, Reason: wire.ReasonUBLProfile, Rule: term, Code: codeNoAgreement,
			Msg: fmt.Sprintf("partner %s: %s %q is not agreed in its profile (ubl)", p.ID, what, escape.Header(got))}
	}
	if got := doc.Root.Get("cbc:CustomizationID"); len(c.CustomizationIDs) > 0 && !slices.Contains(c.CustomizationIDs, got) {
		return reject("BT-24", "CustomizationID", got)
	}
	if got := doc.Root.Get("cbc:ProfileID"); len(c.ProfileIDs) > 0 && !slices.Contains(c.ProfileIDs, got) {
		return reject("BT-23", "ProfileID", got)
	}
	if len(c.Senders) > 0 {
		got := endpoint(doc, "cac:AccountingSupplierParty")
		if !slices.Contains(c.Senders, got.Scheme+":"+got.ID) {
			return reject("BT-34", "seller endpoint", got.Scheme+":"+got.ID)
		}
	}
	return nil
}

func endpoint(doc *ubl.Document, party string) ubl.Endpoint {
	e := doc.Root.Find(party + "/cac:Party/cbc:EndpointID")
	if e == nil {
		return ubl.Endpoint{}
	}
	return ubl.Endpoint{Scheme: e.Attr("schemeID"), ID: e.Value()}
}

// TypeMLR is the acknowledgement type of a Peppol Message Level Response.
const TypeMLR = "MLR"

// MLRs build the Message Level Response the profile agrees (ack.mlr):
// rejected (RE, each fatal finding's rule id and XPath, or the guard's
// refusal) for errors and all, accepted (AP, with the warnings) for all
// only. On edi.outbound.<partner>.MLR; nothing is sent here.
func (r *Registry) MLRs(partner, origin, corr string, doc *ubl.Document, findings []ubl.Finding, failure error, ref uint64) []*nats.Msg {
	p, ok := r.Set().Get(partner)
	if !ok || p.Ack.MLR == AckNone || failure == nil && p.Ack.MLR != AckAll {
		return nil
	}
	if ref == 0 {
		ref = originSeq(origin)
	}
	now := r.now().UTC()
	in := ubl.MLRInput{ID: "MLR-" + strconv.FormatUint(ref, 10), IssueDate: now.Format("2006-01-02"), IssueTime: now.Format("15:04:05"),
		ReferenceID: origin, Findings: findings}
	if sch, id, ok := strings.Cut(p.UBL.Endpoint, ":"); ok {
		in.Sender = ubl.Endpoint{Scheme: sch, ID: id}
	}
	in.Receiver = ubl.Endpoint{ID: partner}
	if doc != nil {
		if e := endpoint(doc, "cac:AccountingCustomerParty"); e.ID != "" {
			in.Sender = e
		}
		if e := endpoint(doc, "cac:AccountingSupplierParty"); e.ID != "" {
			in.Receiver = e
		}
		in.ReferenceID = cmp.Or(doc.Root.Get("cbc:ID"), origin)
	}
	if in.Sender.ID == "" {
		in.Sender = ubl.Endpoint{ID: "edihub"}
	}
	result := "accepted"
	if failure != nil {
		result = "rejected"
		var ue *ubl.Error
		if errors.As(failure, &ue) {
			in.Refusal = ue
		} else if !ubl.HasFatal(findings) {
			// refused by the profile or the signature: one line naming why
			rule := "PARTNER-PROFILE"
			var rej *Rejection
			if errors.As(failure, &rej) {
				rule = cmp.Or(rej.Rule, rej.Reason, rule) // BT-24, or signature-missing, unknown-partner, ...
			}
			in.Findings = append(slices.Clone(findings), ubl.Finding{Rule: rule, Severity: ubl.Fatal, XPath: "/" + cmp.Or(docType(doc), "Invoice"),
				Line: 1, Column: 1, Message: failure.Error()})
		}
	}
	body, err := ubl.MLR(in)
	if err != nil {
		r.log.Error().Err(err).Str("partner", partner).Str("origin", origin).Msg("MLR not built")
		return nil
	}
	h := nats.Header{}
	h.Set(wire.HdrPartnerID, p.ID)
	h.Set(wire.HdrMessageType, TypeMLR)
	h.Set(wire.HdrStandard, wire.StandardUBL)
	h.Set(wire.HdrMessageID, in.ID)
	h.Set(wire.HdrAckOf, escape.Header(in.ReferenceID))
	h.Set(wire.HdrAckOrigin, origin)
	h.Set(wire.HdrAckResult, result)
	if corr != "" {
		h.Set(wire.HdrCorrelationID, corr)
	}
	return []*nats.Msg{{Subject: wire.OutboundSubject(p.ID, TypeMLR), Header: h, Data: body}}
}

func docType(doc *ubl.Document) string {
	if doc == nil || doc.Root == nil {
		return ""
	}
	return doc.Root.Name
}

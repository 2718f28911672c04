package partner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// Codes of UN/EDIFACT code list 0085 that agreements refuse with (the
// syntax ones come from the edifact package).
const (
	codeNotActualRecipient = 7  // interchange recipient not actual recipient
	codeNoAgreement        = 17 // no agreement
	codeUnspecified        = 18
	codeUnknownSender      = 23 // unknown interchange sender
	codeTestNotSupported   = 25 // test indicator not supported
	codeSecurity           = 18 // no 0085 code names a transport signature
	codeSyntaxNotSupported = 2
)

// Rejection is a refusal by a partner agreement. Cause is the DLQ cause;
// Reason a stable code (wire.Reason*); the position fields say what a
// CONTRL names (Tag, Element and Component 1-based, tag = 1 as in S011).
type Rejection struct {
	DLQCause string
	Reason   string
	Msg      string
	Rule     string // the failing business rule
	KeyID    string // the signature key id the producer named
	Code     int    // code list 0085

	// Where: the interchange (UNB/ISA) or a message of it.
	Interchange *edifact.Interchange
	Group       *edifact.Group // the group of a UNG/UNE (GS/GE) in error
	Message     *edifact.Message
	Tag         string // service segment (UNB, UNH) or segment in error
	MsgSegment  int    // position of the segment in error in its message (UNH = 1); 0: a service segment
	Element     int    // S011 0098, counting the tag as 1
	Component   int    // S011 0104
	Repetition  int    // S011 0136 (syntax 4): the occurrence of a repeated element in error; 0: none
	err         error  // what it wraps (a *directory.Error)
}

func (r *Rejection) Error() string { return r.DLQCause + ": " + r.Msg }

// Unwrap is the error the refusal wraps, if any.
func (r *Rejection) Unwrap() error { return r.err }

// Cause is the DLQ cause (hub.Causer).
func (r *Rejection) Cause() string { return r.DLQCause }

// FailureHeaders are the hub-owned headers the dead letter carries, values
// escaped: the runbook needs the reason, the rule and the key id.
func (r *Rejection) FailureHeaders() map[string]string {
	h := map[string]string{wire.HdrRejectReason: r.Reason}
	if r.Rule != "" {
		h[wire.HdrRule] = escape.Header(r.Rule)
	}
	if r.KeyID != "" {
		h[wire.HdrSignatureKeyID] = escape.Header(r.KeyID)
	}
	return h
}

// Admit is asked by the parse stage before it reads the interchange: it
// refuses an unknown partner (when profiles are enabled) and a missing or
// wrong signature, and applies the profile's strictness to opts.
func (r *Registry) Admit(partner string, h nats.Header, data []byte, opts *edifact.Options) error {
	set := r.Set()
	if !set.Enabled() {
		return nil
	}
	p, ok := set.Get(partner)
	if !ok {
		return &Rejection{DLQCause: wire.CausePartnerRejected, Reason: wire.ReasonUnknownPartner, Code: codeUnknownSender,
			Msg: fmt.Sprintf("partner %s has no profile (partners.profiles or partners.dir)", escape.Header(partner))}
	}
	if p.Strict != nil && opts != nil {
		opts.Lenient = !*p.Strict
	}
	if p.Signature.Required {
		if rej := p.verify(h, data); rej != nil {
			return rej
		}
	}
	return nil
}

// Message is asked for each message with its JSON view: the interchange
// envelope agreed (sender, recipient, syntax, test indicator), the message
// type and version agreed, then the built-in and the profile's rules.
func (r *Registry) Message(ctx context.Context, partner string, em *edifact.Message, view []byte) error {
	p, ok := r.Set().Get(partner)
	if !ok {
		// Admit refused it when profiles are enabled; without profiles
		// only the directory applies
		return r.validate(nil, em)
	}
	if err := p.checkEnvelope(em); err != nil {
		return err
	}
	if err := r.validate(p, em); err != nil {
		return err
	}
	return p.checkRules(ctx, em, view)
}

// checkEnvelope checks the interchange and the message type agreed.
func (p *Profile) checkEnvelope(em *edifact.Message) error {
	if rej := p.checkInterchange(em.Interchange); rej != nil {
		return rej
	}
	if len(p.messages) > 0 && !slices.ContainsFunc(p.messages, func(a agreedMessage) bool {
		return a.typ == em.Type && (a.version == "" || a.version == messageVersion(em))
	}) {
		return &Rejection{DLQCause: wire.CausePartnerRejected, Reason: wire.ReasonTypeNotAgreed, Code: codeNoAgreement,
			Interchange: em.Interchange, Message: em, Tag: headerTag(em), Element: 3, Component: 1,
			Msg: fmt.Sprintf("message %s: %s %s is not agreed with partner %s (agreed: %s)", escape.Header(em.Ref),
				escape.Header(em.Type), escape.Header(messageVersion(em)), p.ID, strings.Join(p.Messages, ", "))}
	}
	return nil
}

// checkRules runs the built-in rules and the profile's.
func (p *Profile) checkRules(ctx context.Context, em *edifact.Message, view []byte) error {
	if p.BuiltinRules == nil || *p.BuiltinRules {
		if e := runBuiltins(em); e != nil {
			return businessRejection(em, e)
		}
	}
	e, err := runRules(ctx, p.rules, p.ruleTime, em, view)
	if err != nil {
		return err
	}
	if e != nil {
		return businessRejection(em, e)
	}
	return nil
}

func businessRejection(em *edifact.Message, e *ruleError) *Rejection {
	return &Rejection{DLQCause: wire.CauseBusiness, Reason: wire.ReasonRuleFailed, Rule: e.name, Code: codeUnspecified,
		Interchange: em.Interchange, Message: em, Msg: escape.Header(e.Error())}
}

// messageVersion is how a profile writes a message's version: D:96A for
// EDIFACT (0052:0054), the GS08 version for X12 (004010).
func messageVersion(em *edifact.Message) string {
	if em.Interchange != nil && em.Interchange.Standard == "X12" {
		return em.Version
	}
	return em.Version + ":" + em.Release
}

func headerTag(em *edifact.Message) string {
	if em.Interchange != nil && em.Interchange.Standard == "X12" {
		return "ST"
	}
	return "UNH"
}

// CheckInterchange checks an interchange's envelope against partner's
// profile (the parse stage asks after the walk, for interchanges without
// messages too).
func (r *Registry) CheckInterchange(partner string, ich *edifact.Interchange) error {
	p, ok := r.Set().Get(partner)
	if !ok {
		return r.validateEnvelope(nil, ich)
	}
	if rej := p.checkInterchange(ich); rej != nil {
		return rej
	}
	return r.validateEnvelope(p, ich)
}

func (p *Profile) checkInterchange(ich *edifact.Interchange) *Rejection {
	if ich == nil {
		return nil
	}
	x12 := ich.Standard == "X12"
	tag, senderPos, recipPos, testPos, syntaxPos := "UNB", 3, 4, 12, 2
	if x12 {
		tag, senderPos, recipPos, testPos, syntaxPos = "ISA", 7, 9, 16, 13
	}
	rej := func(reason string, code, elem int, format string, a ...any) *Rejection {
		return &Rejection{DLQCause: wire.CausePartnerRejected, Reason: reason, Code: code, Interchange: ich, Tag: tag,
			Element: elem, Component: 1, Msg: fmt.Sprintf(format, a...)}
	}
	if len(p.senders) > 0 && !slices.ContainsFunc(p.senders, func(s party) bool { return s.matches(ich.Sender.ID, ich.Sender.Qualifier) }) {
		return rej(wire.ReasonSenderNotAllowed, codeUnknownSender, senderPos,
			"interchange %s: sender %s (qualifier %s) is not one of partner %s's ids (%s)", escape.Header(ich.ControlRef),
			escape.Header(ich.Sender.ID), escape.Header(ich.Sender.Qualifier), p.ID, strings.Join(p.Senders, ", "))
	}
	if len(p.recipients) > 0 && !slices.ContainsFunc(p.recipients, func(s party) bool {
		return s.matches(ich.Recipient.ID, ich.Recipient.Qualifier)
	}) {
		return rej(wire.ReasonRecipientNotOurs, codeNotActualRecipient, recipPos,
			"interchange %s: recipient %s (qualifier %s) is not one of our ids for partner %s (%s)", escape.Header(ich.ControlRef),
			escape.Header(ich.Recipient.ID), escape.Header(ich.Recipient.Qualifier), p.ID, strings.Join(p.Recipients, ", "))
	}
	if len(p.Syntax) > 0 && !x12 && !slices.ContainsFunc(p.Syntax, func(s string) bool {
		id, v, _ := strings.Cut(s, ":")
		return id == ich.Syntax && (v == "" || v == ich.SyntaxVersion)
	}) {
		return rej(wire.ReasonSyntaxNotAgreed, codeSyntaxNotSupported, syntaxPos,
			"interchange %s: syntax %s:%s is not agreed with partner %s (%s)", escape.Header(ich.ControlRef),
			escape.Header(ich.Syntax), escape.Header(ich.SyntaxVersion), p.ID, strings.Join(p.Syntax, ", "))
	}
	test := isTest(ich)
	switch {
	case p.Test == TestProduction && test:
		return rej(wire.ReasonTestNotAgreed, codeTestNotSupported, testPos,
			"interchange %s is a test interchange; partner %s is agreed for production only", escape.Header(ich.ControlRef), p.ID)
	case p.Test == TestOnly && !test:
		return rej(wire.ReasonTestNotAgreed, codeTestNotSupported, testPos,
			"interchange %s is a production interchange; partner %s is agreed for test interchanges only", escape.Header(ich.ControlRef), p.ID)
	}
	return nil
}

// isTest reads the test indicator: UNB 0035 = 1, ISA15 = T.
func isTest(ich *edifact.Interchange) bool {
	if ich.Standard == "X12" {
		return ich.TestIndicator == "T"
	}
	return ich.TestIndicator == "1"
}

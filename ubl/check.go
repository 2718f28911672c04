package ubl

import "github.com/edihub/edihub/wire"

// Check is what a parse stage calls: guard, parse and validate one
// document. err is an *Error (cause schema) when the document is refused
// before validation; otherwise findings says what Validate found and Cause
// classifies them.
func Check(data []byte, lim *Limits, opts *Options) (doc *Document, findings []Finding, err error) {
	doc, err = ParseBytes(data, lim)
	if err != nil {
		return nil, nil, err
	}
	return doc, doc.Validate(opts), nil
}

// Cause classifies fatal findings for the hub's dead-letter queues: a
// schema finding (XSD, or the UBL syntax binding UBL-SR/UBL-DT) is
// "schema", a Peppol profile rule on the specification or process
// identifier (PEPPOL-EN16931-R004, R007, P0100, P0101) is "partner-rejected",
// any other rule "business". "" when nothing is fatal.
func Cause(findings []Finding) string {
	cause := ""
	for _, f := range findings {
		if f.Severity != Fatal {
			continue
		}
		switch f.Rule {
		case "XSD":
			return wire.CauseSchema
		case "PEPPOL-EN16931-R004", "PEPPOL-EN16931-R007", "PEPPOL-EN16931-P0100", "PEPPOL-EN16931-P0101":
			if cause == "" {
				cause = wire.CausePartnerRejected
			}
		default:
			if len(f.Rule) > 4 && (f.Rule[:4] == "UBL-") {
				return wire.CauseSchema
			}
			cause = wire.CauseBusiness
		}
	}
	return cause
}

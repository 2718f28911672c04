package wire

import (
	"fmt"
	"strings"
)

// Causes of permanent failures; each has its DLQ subject
// edi.<stage>.dlq.<cause>.
const (
	CauseSchema           = "schema"
	CauseBusiness         = "business"
	CausePartnerRejected  = "partner-rejected"
	CauseSignatureInvalid = "signature-invalid"
	CauseUnknown          = "unknown"
)

// Causes lists the dead-letter causes in display order.
var Causes = []string{CauseSchema, CauseBusiness, CausePartnerRejected, CauseSignatureInvalid, CauseUnknown}

// ValidCause reports whether c is one of Causes.
func ValidCause(c string) bool {
	for _, x := range Causes {
		if x == c {
			return true
		}
	}
	return false
}

// reservedStages cannot be stage names: their subjects belong to streams.
var reservedStages = map[string]bool{"ingest": true, "parsed": true, "poison": true, "audit": true, "alerts": true,
	"forensic": true, "events": true, "readyz": true, "upload": true}

// ValidStageName refuses a stage name that is not one subject token or
// whose subjects would collide with another stream's.
func ValidStageName(n string) error {
	if n == "" || strings.ContainsAny(n, ".*> \t") || reservedStages[n] {
		return fmt.Errorf("stage name %q: must be one subject token and not one of ingest, parsed, poison, audit, alerts, forensic, events, readyz, upload", n)
	}
	return nil
}

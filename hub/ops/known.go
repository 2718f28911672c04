package ops

import (
	"slices"
	"strings"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// The values a filter can name. A filter value that is none of them
// matches nothing, which a person reads as "nothing there": refused with
// the list instead (a misspelt --cause schmea must not answer 0 rows).

// PoisonCauses are the x-poison-cause values: the hub's (a panic, a
// timeout, the same failure again and again, a process that died with the
// message, the server's max-deliveries backstop) and the Kafka bridge's
// quarantines (bridge/quarantine.go).
var PoisonCauses = []string{"panic", "timeout", "repeated-failure", "process-died", "max-deliveries",
	"oversize", "bad-header", "no-partner", "bad-partner", "rejected", "bad-topic"}

// KnownCauses are the causes a filter may name: the dead-letter causes
// (wire.Causes) and PoisonCauses.
func KnownCauses() []string { return append(slices.Clone(wire.Causes), PoisonCauses...) }

// AuditActions are the actions of the audit trail: the runbook's, the
// hub's own (quarantine, duplicate-skipped) and the forensic worker's.
var AuditActions = []string{"show", "replay", "park", "drop", "edit", "ticket-ack", "ticket-close",
	audit.AckForeignAction, "quarantine", "duplicate-skipped", "forensic-report"}

func checkKnown(what, v string, known []string) error {
	if slices.Contains(known, v) {
		return nil
	}
	return BadRequest("%s %q: no such %s; want one of %s", what, escape.Line(v), what, strings.Join(known, ", "))
}

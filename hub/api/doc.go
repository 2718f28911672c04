// Package api is the runbook's HTTP JSON API under /api/v1/: bearer tokens
// with a read or operator role, every operation a call into hub/ops, so
// the CLI, the API and a web console behave and audit alike.
//
// It may import hub/ops, hub/audit, wire and escape; nothing imports it
// but cmd.
package api

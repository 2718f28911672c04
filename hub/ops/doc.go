// Package ops is the operator's runbook: list, inspect, show, replay,
// park, drop and edit the messages of the DLQ, PARKING and POISON streams,
// read and verify the audit trail, and the one payload view (Segments)
// every operator surface prints. The CLI (`edihub dlq`, `edihub audit`,
// `edihub poison show`) and the HTTP API (hub/api) both call it, so they
// behave and audit alike.
//
// Nothing here runs on its own: every action is asked for by a person and
// named in the audit trail. Errors speak Go and name no CLI flags; the CLI
// adds its hints.
//
// It may import hub (parse settings and ledger keys for dry-runs), client
// (the streams' verdict on a replayed copy),
// hub/audit, wire, escape, jetstream, edifact and ubl (the payload view of
// a UBL document); hub never imports it.
package ops

// Package forensics is the POISON analysis worker: a durable consumer on
// the poison stream that runs each quarantined message in a capped,
// isolated child process (package sandbox), stores the report and the
// payload in the Object Store and a ticket in KV, publishes a summary on
// edi.forensic.<partner> and audits it. The worker runs in a process of its
// own (`edihub sandbox`, a child of serve): whatever the children do, the
// hub's process is not touched. Analyzer is what runs inside the child.
//
// It may import hub (stages, the parse stage, drills), hub/audit,
// hub/alert, wire, escape, jetstream, edifact and sandbox; hub never
// imports it.
package forensics

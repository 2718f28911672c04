// Package audit is the hub's audit trail: hash-chained events, signed
// with the hub's keys (Keyring, HMAC-SHA256), appended to the AUDIT stream
// (Auditor), read back (Read) and verified (Verify, VerifyWith).
// Every operator action, quarantine and forensic report is an event.
//
// It may import jetstream, wire and escape; the pipeline, the runbook and
// the forensic worker all append through it.
package audit

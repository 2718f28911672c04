// Package parse is the room of the EDI decision: the hub's built-in parse
// stage and the pure Decide it acts on. Decide runs the partner
// agreements' Admit (profile, signature, strictness), the guard, one
// EDIFACT walk rendering one JSON view per message on
// edi.parsed.<partner>.<type> (each asked of the agreements: envelope,
// type, directory, rules), the envelopes' checks and the interchange
// ledger's duplicate check, and returns the verdict, the outputs, the
// ledger keys and the acknowledgements agreed as data: it sends, records
// and counts nothing. The stage (New, Stage) publishes what Decide returns
// (negative acknowledgements before the dead letter, positive ones with
// the outputs, the ledger's records committed when the worker publishes
// them: hub.Message.CommitOnSuccess); `dlq replay --dry-run` (hub/ops) and
// the forensic analyzer (hub/forensics) report the same Decide.
//
// The stage admits each interchange through a Budget (budget.go,
// parse.memory_budget) before Decide: partitions wait for room rather than
// parse more than the process can hold.
//
// It owns Decide, New and Stage, Budget, the Ledger and Agreements interfaces they
// ask, and LedgerKey/LedgerKeys (how an interchange is named in the
// ledger). The worker's vocabulary for what the stage returns
// (hub.DuplicateError, hub.UnavailableError, hub.Failure) stays in hub:
// the worker acts on it without knowing this package.
//
// An XML payload (LooksXML: its first byte after a BOM and white space is
// '<') is a UBL document: Decide runs Admit, the ubl guard and parser, the
// agreements' UBLAgreements (the profile's ubl: section), ubl validation
// (ubl.Cause: schema, business, partner-rejected; UBLRefusal puts the rule
// ids in x-rule), one JSON view on edi.parsed.<partner>.INVOICE or
// .CREDITNOTE, UBLLedgerKey and the ledger, and the MLRs agreed (ubl.go).
//
// It may import hub, hub/audit and the leaves (wire, edifact, ubl, ledger,
// jetstream). hub never imports it: hub.New takes the stages it runs, and
// the caller builds this one. test/arch_test.go checks it.
package parse

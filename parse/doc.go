// Package parse is the hub's built-in parse stage: the guard, the
// EDIFACT walk and envelope checks, one JSON view per message on
// edi.parsed.<partner>.<type>, the interchange ledger's duplicate check
// (answered from the ledger's index in memory) and its records (committed
// when the worker publishes the outputs: hub.Message.CommitOnSuccess),
// and the partner agreements it enforces (Admit, Message,
// CheckInterchange, Finish).
//
// It owns Stage and StageWith (the hub.Stage cmd/edihub, the forensic
// analyzer and the test kit build), the Ledger and Agreements interfaces
// the stage asks, and LedgerKey/LedgerKeys (how an interchange is named
// in the ledger). The worker's vocabulary for what the stage returns
// (hub.DuplicateError, hub.UnavailableError, hub.Failure) stays in hub:
// the worker acts on it without knowing this package.
//
// It may import hub, hub/audit and the leaves (wire, edifact, ledger).
// hub never imports it: hub.New takes the stages it runs, and the caller
// builds this one. test/arch_test.go checks it.
package parse

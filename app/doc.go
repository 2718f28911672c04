// Package app is the edihub application as a library: its configuration
// (Config, the YAML file `edihub serve --config` reads) with the checks
// that refuse what cannot work, and its assembly: New opens the data
// folder's lock, the ports, the audit key, the in-flight table, the
// embedded NATS server (unless nats.url), the connections, the ledger (and
// the one-time move of a ledger.db), the partner profiles, the attempt
// store, the cluster parts, the hub, the runbook and API, the HTTP
// endpoints and the Kafka bridge; Run runs them with the sandbox worker
// until its context ends.
//
//	a, err := app.New(ctx, cfg, nil) // nil options mean defaults
//	...
//	err = a.Run(ctx)
//
// OpenOps is the operator runbook with the business rules every caller
// gets (a replayed quarantined message is noted on its ticket). cmd/edihub
// turns flags into a Config and calls New and Run; tests run the
// application in-process the same way.
//
// app may import every room of the module below cmd (test/arch_test.go);
// nothing of the module imports app but cmd/edihub and tests.
package app

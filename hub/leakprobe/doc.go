// Package leakprobe is the hub's built-in dead-letter leak probe, for
// edge sites without Prometheus: from samples of the DLQ subjects' depth
// and of the dead-lettered and processed counts it decides when a
// dead-letter subject grows too fast or the dead-letter ratio is too high,
// alerting once when a condition starts and again only after it cleared.
// It owns the hub.leak_probe config section (Config) and the probe's
// state as the console shows it (Status).
//
// It only decides: the hub samples the DLQ stream, fires the alerts and
// publishes the state (package hub, runLeakProbe). It may import hub/alert
// (the Alert it returns) and nothing else of the module; test/arch_test.go
// checks it.
package leakprobe

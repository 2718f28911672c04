// Package alert is the hub's rate-limited alerter: one alert per (name,
// partner) and interval, then a digest that counts what was suppressed,
// fanned out to sinks (the log, NATS subjects <prefix>.<name>, an
// Alertmanager webhook).
//
// It may import wire, escape and jetstream (limits shared in KV); it knows nothing of the pipeline, so the
// hub, the forensic worker and the bridge can all alert through it.
package alert

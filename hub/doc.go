// Package hub is the edihub pipeline: one strictly ordered worker per
// partition of the INGEST stream, attempt counting that survives process
// death, quarantine of poison messages, typed failures, retries, dead-letter
// queues by cause, alerts and the hash-chained audit trail.
//
// A Hub can be embedded in another Go program with its own stages: build a
// Config, give New a NATS connection, a counter store and the stages, and
// call Run. cmd/edihub does exactly that.
package hub

// Package jetstream starts an embedded NATS server with JetStream or connects
// to an external one, provisions streams idempotently and publishes with
// server-side deduplication.
//
// It knows nothing of EDI or of the hub's pipeline: the hub hands it stream
// configurations and messages. The name clashes with nats.go's own jetstream
// package on purpose (this is the product's JetStream layer); importers alias
// one of the two.
package jetstream

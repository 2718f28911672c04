// Package metrics holds the pipeline's Prometheus collectors
// (edihub_pipeline_*, edihub_dlq_*, edihub_counter_*, edihub_partition_*,
// ...), registered on the registry the application creates, and the rule
// that keeps the DLQ depth gauge's labels bounded: only configured stages
// and known causes, anything else under "other", never a label a
// publisher chose. Also what the hub reports about itself beside them:
// PublishHealth (whose publish failures are, for /readyz) and the Board
// behind hub.Status (the leak probe's state, the recent alerts).
//
// It may import alert, hub/leakprobe and the leaves (wire, jetstream);
// hub imports it. test/arch_test.go checks it.
package metrics

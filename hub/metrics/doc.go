// Package metrics holds the pipeline's Prometheus collectors
// (edihub_pipeline_*, edihub_dlq_*, edihub_counter_*, edihub_partition_*,
// ...), registered on the registry the application creates, and the rule
// that keeps the DLQ depth gauge's labels bounded: only configured stages
// and known causes, anything else under "other", never a label a
// publisher chose.
//
// It may import wire; hub imports it. test/arch_test.go checks it.
package metrics

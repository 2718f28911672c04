// Package hub is the edihub pipeline: a consumer per partition of the
// INGEST stream whose messages run in one lane per partner (each partner
// strictly in order, partners side by side; hub/lanes, optionally pipelined
// within a partner, pipeline.go), attempt counting that survives process
// death, the gate that lets a suspect run alone, quarantine of poison
// messages, typed failures, in-place and tiered retries, dead-letter
// queues by cause, the per-partner bulkhead that pauses and parks a
// failing partner (bulkhead*.go, pauses.go, parking.go) and the leak
// probe's loop (its decision is in hub/leakprobe). The built-in parse stage is a stage like any other, in
// parse.
//
// A Hub can be embedded in another Go program with its own stages: build a
// Config, give New a NATS connection, a counter store and the stages, and
// call Run. cmd/edihub does exactly that, with parse.Stage.
//
// Beside it: hub/lanes (a partition's messages in hand, one lane per
// partner, and the decisions on them), hub/headers (what of a producer's
// headers a copy or an output carries), hub/metrics (the pipeline's
// collectors), hub/failure (a stage's Failure and Classify, named in
// hub's API), drill (the drill stage; app puts it in front of the first
// stage), and in the leaves the event vocabulary (wire.Event) and the
// store sizing (jetstream.DefaultReservation, CheckStoreBudget,
// OutputsFit), the retention and sharing settings (jetstream.Retention,
// Sharing) and the claim check's (claimcheck.Settings).
//
// It may import alert, audit, hub/leakprobe, hub/lanes, hub/headers,
// hub/metrics, hub/failure, claimcheck and the leaf packages (wire,
// escape, jetstream, counter). The parse stage (parse), the runbook
// (hub/ops), its HTTP API (hub/api) and the forensic worker
// (hub/forensics) import hub, never the other way round; test/arch_test.go
// checks it.
package hub

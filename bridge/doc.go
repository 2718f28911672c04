// Package bridge moves records between Kafka and the hub's JetStream streams,
// both ways, at least once and in order per partition.
//
// Inbound routes read a Kafka topic with a consumer group and publish each
// record to edi.ingest.<partner>; the Kafka offset is committed only after
// JetStream acked the publish. The publish carries Nats-Msg-Id
// kafka:<cluster id>:<topic id>:<topic>/<partition>/<offset>, so a record
// read again after a crash is dropped by the server's duplicate window
// instead of being ingested twice, while a re-created topic or a second
// cluster never collides with it (identity.go).
//
// Outbound routes read a JetStream subject filter with a durable pull
// consumer and produce each message to a Kafka topic (a literal name or the
// template {{subject}}) with an idempotent producer; the NATS message is
// acked only after Kafka acknowledged the produce.
//
// Headers cross both ways: every x-* header becomes a Kafka header and back
// (names the hub owns arrive as x-producer-<name>), so do traceparent,
// tracestate and the configured carry_headers; the Kafka key travels as
// x-kafka-key, and dead-letter routes add Spring Kafka's kafka_dlt-* or
// Kafka Connect's __connect.errors.* headers (dlt.go).
//
// The bridge never reads what it wrote: overlapping routes are refused by
// Validate and every copy it writes carries x-bridge-copy, which outbound
// routes ack without producing (loops.go). A route that finds messages a
// dead instance left unacked resets its consumer to the ack floor so
// per-partner order holds on Kafka (order.go).
// Inbound adds x-kafka-topic, x-kafka-partition, x-kafka-offset and
// x-kafka-timestamp (ms). Outbound keys a record by x-kafka-key, else
// x-partner-id, else the partner token of the subject, so one partner's
// records share a Kafka partition; the record's timestamp is the time of
// the produce (an old original time could fall outside the topic's
// retention at once), the original times travel in headers.
//
// A record that cannot be mapped (too large for NATS, a header NATS cannot
// carry, no partner) never loops: it is published to edi.poison.bridge with
// its cause and then committed, and the route goes on.
//
// A config, as the bridge: section of the hub's YAML (every other field has
// a default, see Config):
//
//	bridge:
//	  brokers: [kafka-1:9092, kafka-2:9092]
//	  inbound:
//	    - topic: partners.in            # partner = record key
//	    - topic: partners.hdr
//	      partner_from: header:x-partner-id
//	  outbound:
//	    - filter: edi.parsed.>
//	      topic: edi.parsed
//	    - filter: edi.*.dlq.>           # topic {{subject}}, Spring headers on
//
// The bridge sits beside the hub, not in it: it imports this module's
// jetstream package and nothing of hub.
package bridge

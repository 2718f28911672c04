package wire

// Headers of the Kafka bridge that are not in headers.go: the mark on the
// copies the bridge itself writes into the hub's streams, and the consumer
// group an inbound record was read with.
const (
	// HdrBridgeCopy marks a message the bridge wrote (an inbound record on
	// edi.ingest, a poison copy on edi.poison.bridge); its value is the
	// route that wrote it. No outbound route produces a marked message, so
	// the bridge never reads back what it wrote. The hub owns the name: a
	// producer's header of that name is kept as x-producer-x-bridge-copy
	// on the hub's copies, so it cannot make a route skip a message.
	HdrBridgeCopy = "x-bridge-copy"
	// HdrKafkaGroup is the consumer group an inbound record was read with
	// (Spring's kafka_dlt-original-consumer-group on its dead letters).
	HdrKafkaGroup = "x-kafka-group"
)

func init() {
	hubOwned[HdrBridgeCopy] = true
	producerSettable[HdrKafkaGroup] = true
}

package jetstream

// MaxDeliveriesAdvisory is the part of JetStream's MAX_DELIVERIES
// advisory (on MaxDeliveriesSubject) the hub's backstop needs: the
// server gave up on a message of a consumer with a MaxDeliver.
type MaxDeliveriesAdvisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// MaxDeliveriesSubject is where the server publishes those advisories.
const MaxDeliveriesSubject = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>"

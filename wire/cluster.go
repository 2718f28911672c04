package wire

// Names of a hub that shares its work with other instances on a NATS
// cluster.
const (
	// HdrPinID is the header nats-server puts on a message delivered to the
	// pinned client of a priority group; it changes when the pin moves.
	HdrPinID = "Nats-Pin-Id"
	// PartitionGroup is the priority group of the partition consumers:
	// one instance at a time is pinned to each partition.
	PartitionGroup = "edihub"
	// UnstoredSubject is where the hubs of a cluster tell each other, on
	// core NATS (not stored: it works while the attempt store has no
	// quorum or a full disk), of an outcome the attempt store refused and
	// of one stored later. Hub-owned: each message carries x-hub-mac.
	UnstoredSubject = "edi.cluster.unstored"
	// DefaultLeaseBucket holds the singletons' leases.
	DefaultLeaseBucket = "edihub-leases"
	// DefaultAlertLimitBucket holds the alert rate limits shared by the
	// instances of a cluster.
	DefaultAlertLimitBucket = "edihub-alert-limits"
	// DefaultAttemptBucket holds attempt records when counter.store is kv.
	DefaultAttemptBucket = "edihub-attempts"
	// DefaultAckRefBucket holds the per-partner counters of acknowledgement
	// control references (UNB 0020, ISA13 of CONTRL, APERAK, TA1, 999, 997).
	DefaultAckRefBucket = "edihub-ack-refs"
)

// Singleton lease names: each runs on one instance at a time.
const (
	LeaseHousekeeping = "housekeeping"
	LeaseLeakProbe    = "leak-probe"
	LeaseAdvisories   = "max-deliveries"
)

// PinID is the pin of a message delivered to a priority group's pinned
// client: the last Nats-Pin-Id, the one the server appends on delivery. A
// partner may publish a Nats-Pin-Id of its own, stored with the message
// and delivered before the server's; taken, it would make every message
// look like a pin move (a barrier, a new read of the ledger and the parks
// each time). "" when the message has none.
func PinID(h map[string][]string) string {
	vals := h[HdrPinID]
	if len(vals) == 0 {
		return ""
	}
	return vals[len(vals)-1]
}

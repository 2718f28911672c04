package wire

import (
	"slices"
	"strings"
)

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

// HdrKafkaMAC signs the x-kafka-* headers the bridge set on a record it
// brought in from Kafka, for the partner it brought it in for: kid:tag
// with the hub's audit key (SignKafkaOrigin). Only headers it verifies
// for are the bridge's; the hub and the outbound routes treat any other
// x-kafka-* as a producer's (x-producer-x-kafka-*), so a NATS producer
// cannot key a record as another partner or steer a dead letter to
// another topic.
const HdrKafkaMAC = "x-kafka-mac"

// kafkaOriginDomain separates this MAC from the audit key's other uses.
const kafkaOriginDomain = "edihub kafka-origin v1"

// kafkaOriginNames are the headers HdrKafkaMAC covers, in this order.
var kafkaOriginNames = []string{HdrKafkaKey, HdrKafkaKeyEnc, HdrKafkaTopic, HdrKafkaPartition, HdrKafkaOffset,
	HdrKafkaTimestamp, HdrKafkaGroup}

// MACKeys signs and checks with a key ring (*audit.Keyring is one).
type MACKeys interface {
	Sign(domain string, msg []byte) (kid, tag string)
	Check(domain, kid, tag string, msg []byte) error
}

// IsKafkaHeader reports whether name is an x-kafka-* name, in any case.
func IsKafkaHeader(name string) bool {
	return len(name) > len(kafkaPrefix) && strings.EqualFold(name[:len(kafkaPrefix)], kafkaPrefix)
}

const kafkaPrefix = "x-kafka-"

// kafkaOriginInput is what HdrKafkaMAC covers: the partner, then each
// covered header's values (every value: a second one appended later
// breaks the MAC). Values hold no newline or NUL.
func kafkaOriginInput(partner string, h map[string][]string) []byte {
	var b strings.Builder
	b.WriteString(partner)
	for _, n := range kafkaOriginNames {
		b.WriteByte('\n')
		b.WriteString(strings.Join(h[n], "\x00"))
	}
	return []byte(b.String())
}

// SignKafkaOrigin sets HdrKafkaMAC over h's x-kafka-* headers for partner
// (the bridge, once it set them all). Without keys it sets none.
func SignKafkaOrigin(keys MACKeys, partner string, h map[string][]string) {
	delete(h, HdrKafkaMAC)
	if keys == nil {
		return
	}
	kid, tag := keys.Sign(kafkaOriginDomain, kafkaOriginInput(partner, h))
	h[HdrKafkaMAC] = []string{kid + ":" + tag}
}

// KafkaOriginSigned reports whether h's x-kafka-* headers are the ones the
// bridge signed for partner.
func KafkaOriginSigned(keys MACKeys, partner string, h map[string][]string) bool {
	vs := h[HdrKafkaMAC]
	if keys == nil || partner == "" || len(vs) != 1 {
		return false
	}
	kid, tag, ok := strings.Cut(vs[0], ":")
	return ok && keys.Check(kafkaOriginDomain, kid, tag, kafkaOriginInput(partner, h)) == nil
}

// OwnKafkaHeaders moves every x-kafka-* header of h (any case) to
// x-producer-<lower-case name>, unless the bridge signed them for partner:
// then only the names it signs (and the MAC) stay. It reports whether the
// signed ones stayed.
func OwnKafkaHeaders(keys MACKeys, partner string, h map[string][]string) (signed bool) {
	signed = KafkaOriginSigned(keys, partner, h)
	for k, vs := range h {
		if !IsKafkaHeader(k) {
			continue
		}
		if signed && (k == HdrKafkaMAC || slices.Contains(kafkaOriginNames, k)) {
			continue
		}
		delete(h, k)
		p := HdrProducerPrefix + strings.ToLower(k)
		h[p] = append(h[p], vs...)
	}
	return signed
}

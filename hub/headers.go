package hub

import (
	"slices"
	"sort"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// maxProducerHeaders caps the producer headers a copy carries: the hub adds
// its own x-* headers, and a copy over the server's header limit would fail
// forever and hold the partition.
const maxProducerHeaders = 16 << 10

// producerHeaders are the headers of a producer's message as a copy may
// carry them: the server's Nats-* ones left out, names that are not valid
// tokens and values with control bytes dropped, names the hub owns moved
// to x-producer-<name>, and at most maxProducerHeaders bytes. What was
// dropped is listed by name (escaped) in x-headers-dropped.
func producerHeaders(h nats.Header) nats.Header {
	out := nats.Header{}
	var dropped []string
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names) // the same message always keeps the same headers
	size := 0
	for _, k := range names {
		if strings.HasPrefix(k, wire.ServerHeaderPrefix) {
			continue
		}
		if !wire.ValidHeaderName(k) {
			dropped = append(dropped, escape.Header(k))
			continue
		}
		name := wire.ProducerName(k)
		for _, v := range h[k] {
			if !wire.ValidHeaderValue(v) || size+len(name)+len(v)+4 > maxProducerHeaders {
				dropped = append(dropped, escape.Header(k))
				continue
			}
			size += len(name) + len(v) + 4
			out[name] = append(out[name], v)
		}
	}
	if len(dropped) > 0 {
		out.Set(wire.HdrHeadersDropped, escape.Header(strings.Join(slices.Compact(dropped), ",")))
	}
	return out
}

// carriedHeaders are the producer's headers a parsed output carries, so
// that a custom x-* header or a W3C traceparent sent with an interchange
// (or carried in from Kafka by the bridge) reaches edi.parsed: valid names
// and values only, never the server's Nats-* ones, never a name the hub
// owns (the output's own x-* headers say what the hub knows; a producer's
// claim is not repeated there), never the payload's signature (it signs
// the interchange, not the JSON), and at most maxProducerHeaders bytes.
// Nil when nothing is carried: the common case costs no map.
func carriedHeaders(h nats.Header) nats.Header {
	var out nats.Header
	size := 0
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names) // the same message always carries the same headers
	for _, k := range names {
		vs := h[k]
		if strings.HasPrefix(k, wire.ServerHeaderPrefix) || wire.HubOwned(k) || !wire.ValidHeaderName(k) ||
			k == wire.HdrCorrelationID || k == wire.HdrSignature || k == wire.HdrSignatureKey {
			continue
		}
		for _, v := range vs {
			if !wire.ValidHeaderValue(v) || size+len(k)+len(v)+4 > maxProducerHeaders {
				continue
			}
			size += len(k) + len(v) + 4
			if out == nil {
				out = nats.Header{}
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// hubHeadersOnly keeps the hub's own x-* headers of a copy: the fallback
// when even the cleaned producer headers cannot be stored.
func hubHeadersOnly(h nats.Header) nats.Header {
	out := nats.Header{}
	for k, vs := range h {
		if !wire.HubOwned(k) && k != wire.HdrCorrelationID && k != wire.HdrDrill {
			continue
		}
		out[k] = vs
	}
	out.Set(wire.HdrHeadersDropped, "*")
	return out
}

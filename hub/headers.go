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

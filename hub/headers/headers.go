package headers

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

// Producer are the headers of a producer's message as a copy may
// carry them: the server's Nats-* ones left out, names that are not valid
// tokens and values with control bytes dropped, names the hub owns moved
// to x-producer-<name>, and at most maxProducerHeaders bytes. What was
// dropped is listed by name (escaped) in x-headers-dropped.
func Producer(h nats.Header) nats.Header {
	out := nats.Header{}
	dropped := clean(h, wire.ProducerName, func(name, v string) { out[name] = append(out[name], v) })
	if len(dropped) > 0 {
		out.Set(wire.HdrHeadersDropped, escape.Header(strings.Join(slices.Compact(dropped), ",")))
	}
	return out
}

// Carried are the producer's headers a parsed output carries, so
// that a custom x-* header or a W3C traceparent sent with an interchange
// (or carried in from Kafka by the bridge) reaches edi.parsed: what
// Producer keeps, except a name the hub owns (the output's own x-*
// headers say what the hub knows; a producer's claim is not repeated
// there), the correlation id the output sets itself, a drill request, and the payload's
// signature (it signs the interchange, not the JSON). Nil when nothing is
// carried: the common case costs no map.
func Carried(h nats.Header) nats.Header {
	var out nats.Header
	skip := func(k string) string {
		// x-drill is a request to this hub, not a fact about the output.
		// x-upload-*: the interchange's upload, not the output's payload
		if wire.HubOwned(k) || k == wire.HdrCorrelationID || k == wire.HdrSignature || k == wire.HdrSignatureKey || k == wire.HdrDrill ||
			k == wire.HdrUploadSHA256 || k == wire.HdrUploadSize {
			return ""
		}
		return k
	}
	clean(h, skip, func(name, v string) {
		if out == nil {
			out = nats.Header{}
		}
		out[name] = append(out[name], v)
	})
	return out
}

// clean walks a producer's headers in name order (the same message
// always keeps the same ones) and hands keep each value that may travel:
// never the server's Nats-* headers, only valid names and values, named
// by rename ("" leaves the header out), and at most maxProducerHeaders
// bytes in all. It returns the names (escaped) it dropped as invalid or
// over the limit.
func clean(h nats.Header, rename func(string) string, keep func(name, value string)) (dropped []string) {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	size := 0
	for _, k := range names {
		if strings.HasPrefix(k, wire.ServerHeaderPrefix) {
			continue
		}
		if !wire.ValidHeaderName(k) {
			dropped = append(dropped, escape.Header(k))
			continue
		}
		name := rename(k)
		if name == "" {
			continue
		}
		for _, v := range h[k] {
			if !wire.ValidHeaderValue(v) || size+len(name)+len(v)+4 > maxProducerHeaders {
				dropped = append(dropped, escape.Header(k))
				continue
			}
			size += len(name) + len(v) + 4
			keep(name, v)
		}
	}
	return dropped
}

// hubOnlyKept are the producer's headers HubOnly keeps.
var hubOnlyKept = map[string]bool{wire.HdrCorrelationID: true, wire.HdrDrill: true, wire.HdrUploadSHA256: true, wire.HdrUploadSize: true}

// HubOnly keeps the hub's own x-* headers of a copy: the fallback
// when even the cleaned producer headers cannot be stored. It keeps the
// producer's ones the copy's x-hub-mac covers too (the drill, the upload
// headers), so the copy is still the hub's.
func HubOnly(h nats.Header) nats.Header {
	out := nats.Header{}
	for k, vs := range h {
		if wire.HubOwned(k) || hubOnlyKept[k] {
			out[k] = vs
		}
	}
	out.Set(wire.HdrHeadersDropped, "*")
	return out
}

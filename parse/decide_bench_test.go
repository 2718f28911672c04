package parse_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/parse"
)

// BenchmarkDecideEDIFACT1k is Decide on a 1 KB EDIFACT interchange
// without agreements: what the UBL routing (LooksXML, one byte check)
// must not slow down. Compare with the tree before UBL (allocations equal).
func BenchmarkDecideEDIFACT1k(b *testing.B) {
	data := edifacttest.BigInvoice(14)
	b.Logf("%d bytes", len(data))
	in := &parse.Input{Partner: "P", Stream: "INGEST", Seq: 1, Header: nats.Header{}, Data: data}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if d := parse.Decide(context.Background(), in, parse.With{}); d.Err != nil {
			b.Fatal(d.Err)
		}
	}
}

// BenchmarkLooksXML is the whole cost UBL adds to an EDIFACT interchange.
func BenchmarkLooksXML(b *testing.B) {
	data := edifacttest.BigInvoice(14)
	b.ReportAllocs()
	for b.Loop() {
		if parse.LooksXML(data) {
			b.Fatal("EDIFACT taken for XML")
		}
	}
}

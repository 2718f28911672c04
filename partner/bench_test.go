package partner

import (
	"context"
	"fmt"
	"github.com/edihub/edihub/edifact/edifacttest"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
)

// BenchmarkAgreements: the parse stage's walk and JSON view alone, then
// with a profile (envelope and type agreed, built-in rules), with a CEL
// rule, with a signature, and with directory validation (lenient).
func BenchmarkAgreements(b *testing.B) {
	key, _ := NewSigningKey("k1")
	base := Profile{ID: "ACME", Senders: []string{"4012345000009:14"}, Messages: []string{"INVOIC D:96A"}, Directory: "off"}
	withRule := base
	withRule.Rules = []Rule{{Name: "buyer", Type: "INVOIC", Expr: `msg.segments.exists(s, s.tag == "NAD" && s.elements[0][0] == "BY")`}}
	signed := base
	signed.Signature = SignatureConfig{Required: true, Keys: map[string]string{"k1": key.PublicKey()}}
	dir := base
	dir.Directory = "lenient"
	for _, lines := range []int{10, 1000} {
		data := edifacttest.BigInvoice(lines)
		h := nats.Header{}
		key.Sign(h, "ACME", data)
		for _, c := range []struct {
			name string
			p    *Profile
		}{{"walk-only", nil}, {"profile", &base}, {"profile+cel", &withRule}, {"profile+signature", &signed}, {"profile+directory", &dir}} {
			b.Run(fmt.Sprintf("lines=%d/%s", lines, c.name), func(b *testing.B) {
				var r *Registry
				if c.p != nil {
					var err error
					if r, err = New(Config{Profiles: []Profile{*c.p}}, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if r == nil {
						if _, err := edifact.Walk(data, nil, func(em *edifact.Message) error { _, err := edifact.MessageJSON(em); return err }); err != nil {
							b.Fatal(err)
						}
						continue
					}
					var n int
					var refused []error
					if _, err := r.try(context.Background(), "ACME", h, data, &edifact.Options{}, &n, &refused); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

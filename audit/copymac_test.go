package audit

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/wire"
)

func signedCopy(t *testing.T, keys *Keyring) (nats.Header, []byte) {
	t.Helper()
	h := nats.Header{}
	for k, v := range map[string]string{wire.HdrOriginalStream: "INGEST", wire.HdrOriginalSeq: "7",
		wire.HdrOriginalTopic: "edi.ingest.ACME", wire.HdrPartnerID: "ACME", wire.HdrDrill: "panic", wire.HdrDrillMode: "on",
		wire.HdrUploadSHA256: strings.Repeat("a", 64), wire.HdrUploadSize: "12", "x-custom": "not covered"} {
		h.Set(k, v)
	}
	data := []byte(`{"upload":{}}`)
	SignCopy(keys, h, data)
	return h, data
}

// SignCopy writes a v2 MAC that covers the partner, the original's
// subject, stream and sequence, the drill and the upload and reference
// headers: changing any of them, or the payload, or relabelling the MAC
// as the other version, breaks it.
func TestCopyMACv2CoversPartnerAndUploadHeaders(t *testing.T) {
	keys := testKeyring(t, "k")
	h, data := signedCopy(t, keys)
	if v := h.Get(wire.HdrHubMAC); !strings.HasPrefix(v, "v2:"+keys.CurrentID()+":") {
		t.Fatalf("x-hub-mac %q, want v2:<kid>:<mac>", v)
	}
	if v, err := CheckCopy(keys, h, data); err != nil || v != CopyMACv2 {
		t.Fatalf("the hub's copy: %v %v", v, err)
	}
	h.Set("x-custom", "changed") // not covered: a producer's header
	if err := VerifyCopy(keys, h, data); err != nil {
		t.Fatalf("an uncovered header broke the MAC: %v", err)
	}
	for _, k := range copyMACHeadersV2 {
		t.Run(k, func(t *testing.T) {
			forged := nats.Header{}
			for n, vs := range h {
				forged[n] = append([]string(nil), vs...)
			}
			forged.Set(k, forged.Get(k)+"B")
			if v, err := CheckCopy(keys, forged, data); err == nil {
				t.Fatalf("a changed %s still verifies (%v)", k, v)
			}
		})
	}
	if VerifyCopy(keys, h, []byte("other")) == nil {
		t.Fatal("another payload still verifies")
	}
	stripped := nats.Header{}
	for n, vs := range h {
		stripped[n] = vs
	}
	stripped.Set(wire.HdrHubMAC, strings.TrimPrefix(h.Get(wire.HdrHubMAC), "v2:"))
	if VerifyCopy(keys, stripped, data) == nil {
		t.Fatal("a v2 MAC without its prefix verifies as v1")
	}
	if _, err := CheckCopy(nil, h, data); err == nil || !strings.Contains(err.Error(), "no audit key") {
		t.Fatalf("without keys: %v", err)
	}
	if _, err := CheckCopy(testKeyring(t, "o"), h, data); err == nil || !strings.Contains(err.Error(), "not in the keyring") {
		t.Fatalf("another hub's key: %v", err)
	}
}

// A copy an older hub stored carries a v1 MAC ("<kid>:<mac>" over the
// original's stream and sequence, the drill headers and the payload): it
// still verifies, as CopyMACv1, also with a changed partner (which v1
// never covered; readers that trust the partner need v2); a changed
// drill breaks it, as before.
func TestCopyMACv1StillVerifiesForWhatItCovers(t *testing.T) {
	keys := testKeyring(t, "k")
	h, data := signedCopy(t, keys)
	kid, tag := keys.Sign("edihub-hub-copy-v1", []byte(strings.Join([]string{"INGEST", "7", "on", "panic", PayloadHash(data)}, "\n")))
	h.Set(wire.HdrHubMAC, kid+":"+tag)
	if v, err := CheckCopy(keys, h, data); err != nil || v != CopyMACv1 {
		t.Fatalf("an older hub's copy: %v %v", v, err)
	}
	h.Set(wire.HdrPartnerID, "OTHER")
	if v, err := CheckCopy(keys, h, data); err != nil || v != CopyMACv1 {
		t.Fatalf("v1 with another partner: %v %v", v, err)
	}
	relabelled := nats.Header{}
	for n, vs := range h {
		relabelled[n] = vs
	}
	relabelled.Set(wire.HdrHubMAC, "v2:"+kid+":"+tag)
	if VerifyCopy(keys, relabelled, data) == nil {
		t.Fatal("a v1 MAC relabelled v2 verifies")
	}
	h.Set(wire.HdrDrill, "exit")
	if VerifyCopy(keys, h, data) == nil {
		t.Fatal("v1 with a changed drill still verifies")
	}
}

// BenchmarkCopyMAC is what signing one copy costs, v2 beside the v1 it
// replaced, for a 1 KiB interchange and an upload's announcement.
func BenchmarkCopyMAC(b *testing.B) {
	keys, err := NewKeyring([]byte(strings.Repeat("k", 32)))
	if err != nil {
		b.Fatal(err)
	}
	h := nats.Header{}
	for k, v := range map[string]string{wire.HdrOriginalStream: "INGEST", wire.HdrOriginalSeq: "123456",
		wire.HdrOriginalTopic: "edi.ingest.ACME", wire.HdrPartnerID: "ACME", wire.HdrStage: "parse"} {
		h.Set(k, v)
	}
	for _, p := range []struct {
		name string
		data []byte
	}{{"1KiB", []byte(strings.Repeat("UNH+1+INVOIC:D:96A:UN'", 47))}, {"announcement", []byte(`{"upload":{"sha256":"` + strings.Repeat("a", 64) + `","size":5242880}}`)}} {
		for _, v := range []struct {
			name, domain string
			input        func(nats.Header, []byte) []byte
		}{{"v1", copyMACDomain, copyMACInput}, {"v2", copyMACDomainV2, copyMACInputV2}} {
			b.Run(p.name+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					keys.Sign(v.domain, v.input(h, p.data))
				}
			})
		}
	}
}

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/app"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/partner"
	"github.com/edihub/edihub/wire"
)

// A signed upload is verified on the uploaded bytes, which the stage sees
// in place of the announcement: the signature send makes (over the file)
// is accepted; one over the announcement's stub is signature-invalid.
func TestSignedUploadVerifiedOnTheBytes(t *testing.T) {
	key, err := partner.NewSigningKey("acme-1")
	if err != nil {
		t.Fatal(err)
	}
	payload, err := os.ReadFile(filepath.Join("..", "..", "partner", "testdata", "invoic_ok.edi"))
	if err != nil {
		t.Fatal(err)
	}
	a := startApp(t, func(c *app.Config) {
		c.Partners.Profiles = []partner.Profile{{ID: "ACME", Senders: []string{"4012345000009:14"}, Messages: []string{"INVOIC D:96A"},
			Test: "production", Signature: partner.SignatureConfig{Required: true, Keys: map[string]string{"acme-1": key.PublicKey()}}}}
	}, nil)
	_, j := jetstreamtest.Connect(t, a.NATSURL())
	ctx := context.Background()
	s := sha256.Sum256(payload)
	sum := hex.EncodeToString(s[:])
	announce := func(signed []byte) {
		t.Helper()
		half := len(payload) / 2
		for i, c := range [][]byte{payload[:half], payload[half:]} {
			m := &nats.Msg{Subject: wire.UploadSubject("ACME", sum), Data: c, Header: nats.Header{wire.HdrUploadChunk: {strconv.Itoa(i)}, wire.HdrUploadSHA256: {sum}}}
			if _, err := j.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		up := wire.Upload{SHA256: sum, Size: int64(len(payload))}
		h := nats.Header{wire.HdrUploadSHA256: {sum}, wire.HdrUploadSize: {strconv.Itoa(len(payload))}}
		key.Sign(h, "ACME", signed)
		if _, err := j.PublishMsg(ctx, &nats.Msg{Subject: wire.IngestSubject("ACME"), Header: h, Data: wire.UploadStub(up)}); err != nil {
			t.Fatal(err)
		}
	}
	announce(payload)
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, "PARSED") == 1 }, "the signed upload parsed")
	up := wire.Upload{SHA256: sum, Size: int64(len(payload))}
	announce(wire.UploadStub(up))
	jetstreamtest.Eventually(t, 20*time.Second, func() bool { return jetstreamtest.CountMsgs(t, j, "DLQ") == 1 }, "a signature over the stub refused")
	if m := jetstreamtest.StreamMsgs(t, j, "DLQ")[0]; m.Subject != "edi.parse.dlq.signature-invalid" {
		t.Fatalf("refused on %s: %s", m.Subject, m.Header.Get(wire.HdrErrorMsg))
	}
}

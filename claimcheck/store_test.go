package claimcheck_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/hubclient"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A payload stored aside comes back byte for byte through hubclient; a
// second store under the same name replaces the object (one object, one
// set of chunks); a message whose object was changed is refused.
func TestAsideAndPayload(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := claimcheck.Open(ctx, j, claimcheck.Config{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte(`{"segment":"LIN","elements":[["1"]]},`), 60000) // ~2.2 MB: 17 chunks
	m := &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Header: nats.Header{wire.HdrPartnerID: {"ACME"}}, Data: payload}
	for range 2 { // a redelivery stores it again
		if m, err = s.Aside(ctx, &nats.Msg{Subject: m.Subject, Header: nats.Header{wire.HdrPartnerID: {"ACME"}}, Data: payload}, "INGEST:7:out:0"); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256(payload)
	if m.Header.Get(wire.HdrPayloadRef) != "edihub-payloads/INGEST:7:out:0" || m.Header.Get(wire.HdrPayloadSHA256) != hex.EncodeToString(sum[:]) ||
		m.Header.Get(wire.HdrPartnerID) != "ACME" || m.Subject != "edi.parsed.ACME.INVOIC" {
		t.Fatalf("stub headers %v on %s", m.Header, m.Subject)
	}
	var stub wire.ClaimStub
	if err := json.Unmarshal(m.Data, &stub); err != nil || stub.ClaimCheck.Size != int64(len(payload)) || len(m.Data) > 512 {
		t.Fatalf("stub %s: %v", m.Data, err)
	}
	got, err := hubclient.PayloadOf(ctx, j, m.Header, m.Data)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("payload: %d bytes, %v", len(got), err)
	}
	info, err := j.Stream(ctx, "OBJ_edihub-payloads")
	if err != nil {
		t.Fatal(err)
	}
	st, err := info.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if chunks := (len(payload) + 128<<10 - 1) / (128 << 10); st.State.Msgs != uint64(chunks+1) || st.Config.MaxAge != time.Hour {
		t.Fatalf("bucket holds %d messages (want %d chunks and one meta), max age %v", st.State.Msgs, chunks+1, st.Config.MaxAge)
	}

	inline, err := hubclient.PayloadOf(ctx, j, nats.Header{}, []byte("UNA"))
	if err != nil || string(inline) != "UNA" {
		t.Fatalf("inline payload %q, %v", inline, err)
	}
	forged := nats.Header{}
	for k, v := range m.Header {
		forged[k] = v
	}
	forged.Set(wire.HdrPayloadSize, "12")
	if _, err := hubclient.PayloadOf(ctx, j, forged, m.Data); !errors.Is(err, hubclient.ErrPayloadMismatch) {
		t.Fatalf("a size that is not the object's: %v", err)
	}
	forged.Set(wire.HdrPayloadSize, m.Header.Get(wire.HdrPayloadSize))
	forged.Set(wire.HdrPayloadSHA256, hex.EncodeToString(make([]byte, 32)))
	if _, err := hubclient.PayloadOf(ctx, j, forged, m.Data); !errors.Is(err, hubclient.ErrPayloadMismatch) {
		t.Fatalf("a hash that is not the object's: %v", err)
	}
}

func TestClaimOf(t *testing.T) {
	sha := hex.EncodeToString(make([]byte, 32))
	for name, tc := range map[string]struct {
		h    nats.Header
		want error
	}{
		"inline":        {nats.Header{}, wire.ErrNoClaim},
		"no bucket":     {nats.Header{wire.HdrPayloadRef: {"/x"}, wire.HdrPayloadSize: {"1"}, wire.HdrPayloadSHA256: {sha}}, errBad},
		"bad bucket":    {nats.Header{wire.HdrPayloadRef: {"a.b/x"}, wire.HdrPayloadSize: {"1"}, wire.HdrPayloadSHA256: {sha}}, errBad},
		"no size":       {nats.Header{wire.HdrPayloadRef: {"b/x"}, wire.HdrPayloadSHA256: {sha}}, errBad},
		"negative size": {nats.Header{wire.HdrPayloadRef: {"b/x"}, wire.HdrPayloadSize: {"-1"}, wire.HdrPayloadSHA256: {sha}}, errBad},
		"short hash":    {nats.Header{wire.HdrPayloadRef: {"b/x"}, wire.HdrPayloadSize: {"1"}, wire.HdrPayloadSHA256: {"ab"}}, errBad},
		"ok":            {nats.Header{wire.HdrPayloadRef: {"b/x/y"}, wire.HdrPayloadSize: {"1"}, wire.HdrPayloadSHA256: {sha}}, nil},
	} {
		c, err := wire.ClaimOf(tc.h.Get)
		switch {
		case tc.want == errBad && (err == nil || errors.Is(err, wire.ErrNoClaim)),
			tc.want != errBad && !errors.Is(err, tc.want):
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		case tc.want == nil && (c.Ref != wire.PayloadRef{Bucket: "b", Object: "x/y"} || c.Size != 1):
			t.Errorf("%s: %+v", name, c)
		}
	}
}

var errBad = errors.New("any error but ErrNoClaim")

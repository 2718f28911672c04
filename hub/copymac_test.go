package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub/headers"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

func copyKeyring(t *testing.T) *audit.Keyring {
	t.Helper()
	k, err := audit.NewKeyring([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A --drill hub signs the copies it marks x-drill-mode: on; a producer's
// own x-drill-mode and x-hub-mac never survive into a copy.
func TestCopiesCarryTheHubsMAC(t *testing.T) {
	for _, drill := range []bool{true, false} {
		t.Run(map[bool]string{true: "drill", false: "no-drill"}[drill], func(t *testing.T) {
			cfg := fastConfig()
			cfg.Drill = drill
			k := copyKeyring(t)
			env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", cfg,
				[]Stage{echoStage("parse", func(*Message) error { return PermanentError(wire.CauseBusiness, errFail) })},
				func(o *Options) { o.Keyring = k })
			jetstreamtest.PublishIngest(t, env.js, "ACME", "x", nats.Header{wire.HdrDrill: {"error"},
				wire.HdrDrillMode: {"on"}, wire.HdrHubMAC: {"forged:00"}})
			jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.js, "DLQ") == 1 })
			m := jetstreamtest.StreamMsgs(t, env.js, "DLQ")[0]
			if v, err := audit.CheckCopy(k, m.Header, m.Data); err != nil || v != audit.CopyMACv2 {
				t.Fatalf("the hub's own copy does not verify as v2: %v %v (%v)", v, err, m.Header)
			}
			if got, want := m.Header.Get(wire.HdrDrillMode), map[bool]string{true: "on"}[drill]; got != want {
				t.Fatalf("x-drill-mode %q, want %q", got, want)
			}
			// Changing what the MAC covers breaks it.
			m.Header.Set(wire.HdrDrillMode, "on")
			m.Header.Set(wire.HdrDrill, "panic")
			if audit.VerifyCopy(k, m.Header, m.Data) == nil {
				t.Fatal("a changed drill header still verifies")
			}
		})
	}
}

// The MAC on a copy of an upload's announcement covers the partner (from
// the stored subject), the original's subject and the upload headers: a
// copy re-published with another partner's name or another upload's hash
// is not the hub's. The fallback that stores a copy with the hub's
// headers only keeps what the MAC covers.
func TestCopyMACCoversPartnerAndUpload(t *testing.T) {
	k := copyKeyring(t)
	h := &Hub{keys: k}
	up := wire.Upload{SHA256: strings.Repeat("c", 64), Size: 5 << 20}
	m := h.build(&hubCopy{kind: "poison", subject: wire.PoisonSubject("parse"), producers: true, data: wire.UploadStub(up),
		header:     nats.Header{wire.HdrUploadSHA256: {up.SHA256}, wire.HdrUploadSize: {"5242880"}, wire.HdrPartnerID: {"B"}, "x-big": {"x"}},
		origStream: "INGEST", origSeq: 9, origTopic: wire.IngestSubject("ACME"), partner: "ACME", partition: 1, set: nats.Header{}})
	if v, err := audit.CheckCopy(k, m.Header, m.Data); err != nil || v != audit.CopyMACv2 || m.Header.Get(wire.HdrPartnerID) != "ACME" {
		t.Fatalf("copy: %v %v, partner %q (%v)", v, err, m.Header.Get(wire.HdrPartnerID), m.Header)
	}
	for _, forge := range []struct{ k, v string }{{wire.HdrPartnerID, "B"}, {wire.HdrOriginalTopic, wire.IngestSubject("B")},
		{wire.HdrUploadSHA256, strings.Repeat("d", 64)}, {wire.HdrUploadSize, "1"}} {
		forged := headers.HubOnly(m.Header)
		forged.Set(forge.k, forge.v)
		if audit.VerifyCopy(k, forged, m.Data) == nil {
			t.Errorf("a copy with %s %q still verifies", forge.k, forge.v)
		}
	}
	only := headers.HubOnly(m.Header)
	if err := audit.VerifyCopy(k, only, m.Data); err != nil || only.Get("x-big") != "" || only.Get(wire.HdrUploadSHA256) != up.SHA256 {
		t.Fatalf("hub-only copy: %v (%v)", err, only)
	}
}

var errFail = errString("business rule failed")

type errString string

func (e errString) Error() string { return string(e) }

// The hub's own audit events are signed when it has a keyring.
func TestHubAuditEventsAreSigned(t *testing.T) {
	k := copyKeyring(t)
	env := startHub(t, jetstreamtest.StartServer(t, nil).URL, "", fastConfig(), []Stage{echoStage("parse", nil)},
		func(o *Options) { o.Keyring = k })
	ev, err := env.hub.Auditor().Append(context.Background(), audit.Event{Actor: "t", Action: "test"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.MAC == "" || ev.KID != k.CurrentID() {
		t.Fatalf("unsigned event %+v", ev)
	}
	v, err := audit.VerifyWith(context.Background(), env.js, "AUDIT", "", k)
	if err != nil || !v.OK || !v.Authenticated {
		t.Fatalf("%+v %v", v, err)
	}
}

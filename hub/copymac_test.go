package hub

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
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
			if err := audit.VerifyCopy(k, m.Header, m.Data); err != nil {
				t.Fatalf("the hub's own copy does not verify: %v (%v)", err, m.Header)
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

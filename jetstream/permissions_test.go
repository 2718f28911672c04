package jetstream

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

var update = flag.Bool("update", false, "rewrite configs/nats-permissions.conf from the role table")

const confPath = "../configs/nats-permissions.conf"

// TestPermissionsConf keeps configs/nats-permissions.conf equal to the role
// table, so the external server and the embedded one cannot drift.
func TestPermissionsConf(t *testing.T) {
	want, err := PermissionsConf(ExampleUsers(), DefaultAuthNames())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(confPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(confPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("%s differs from RolePermissions; run go test ./jetstream -run TestPermissionsConf -update", confPath)
	}
}

func TestRolePermissionsRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		role    Role
		partner string
	}{{"admin", ""}, {RolePartner, ""}, {RolePartner, "A.B"}, {RolePartner, "*"}, {RolePartner, ">"}} {
		if _, err := RolePermissions(c.role, c.partner, AuthNames{}); err == nil {
			t.Errorf("%s %q: no error", c.role, c.partner)
		}
	}
	if _, err := StartServer(&ServerOptions{DataDir: t.TempDir(), Listen: "127.0.0.1:-1",
		Users: []AuthUser{{Name: "x", Role: RoleHub}}}); err == nil || !strings.Contains(err.Error(), "no password") {
		t.Fatalf("user without secret: %v", err)
	}
}

// TestEmbeddedServerAuth: with users, the embedded server refuses
// anonymous clients and applies the role table.
func TestEmbeddedServerAuth(t *testing.T) {
	s, err := StartServer(&ServerOptions{DataDir: t.TempDir(), Listen: "127.0.0.1:-1", Users: []AuthUser{
		{Name: "hub", Password: "hub-pw-123", Role: RoleHub},
		{Name: "acme", Password: "acme-pw-123", Role: RolePartner, Partner: "ACME"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	url := s.ClientURL()
	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatal("anonymous client connected")
	}
	opts, err := (ClientAuth{User: "hub", Password: "hub-pw-123"}).Options()
	if err != nil {
		t.Fatal(err)
	}
	hub, _, err := Connect(url, "hub", opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	if err := hub.Flush(); err != nil {
		t.Fatal(err)
	}

	errs := make(chan error, 4)
	opts, _ = (ClientAuth{User: "acme", Password: "acme-pw-123", InboxPrefix: PartnerInboxPrefix("ACME")}).Options()
	acme, _, err := Connect(url, "acme", append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))...)
	if err != nil {
		t.Fatal(err)
	}
	defer acme.Close()
	own, err := acme.SubscribeSync("edi.parsed.ACME.>")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acme.SubscribeSync("edi.parsed.BETA.>"); err != nil {
		t.Fatal(err)
	}
	if err := acme.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), "edi.parsed.BETA") {
			t.Fatalf("want a permissions violation for edi.parsed.BETA.>, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("subscribing to another partner's results was not refused")
	}
	if err := hub.Publish("edi.parsed.ACME.INVOIC", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := own.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("own results: %v", err)
	}
}

package jetstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                           "nats://127.0.0.1:4222",
		"nats://hub:s3cret@h:4222":                        "nats://hub:REDACTED@h:4222",
		"nats://t0ken@h:4222":                             "nats://REDACTED@h:4222",
		"hub:p@ss@h:4222":                                 "hub:REDACTED@h:4222",
		"nats://a:x@n1:4222, nats://n2:4222,tls://b:y@n3": "nats://a:REDACTED@n1:4222,nats://n2:4222,tls://b:REDACTED@n3",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClientAuthOptions(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if pw, err := (ClientAuth{User: "u", PasswordFile: pwFile}).ReadPassword(); err != nil || pw != "s3cret" {
		t.Fatalf("ReadPassword = %q, %v", pw, err)
	}
	for _, bad := range []ClientAuth{
		{User: "u", CredsFile: "c"},
		{Password: "Xyzzy42"},
		{User: "u", Password: "Xyzzy42", PasswordFile: pwFile},
		{TLSCert: "c"},
		{InboxPrefix: "_INBOX.>"},
	} {
		if _, err := bad.Options(); err == nil {
			t.Errorf("%+v: no error", bad)
		} else if strings.Contains(err.Error(), "s3cret") || (bad.Password != "" && strings.Contains(err.Error(), bad.Password)) {
			t.Errorf("%+v: error shows the secret: %v", bad, err)
		}
	}
	seed := filepath.Join(dir, "seed")
	if err := os.WriteFile(seed, []byte("SUAGARBAGEGARBAGEGARBAGE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (ClientAuth{NKeyFile: seed}).Options()
	if err == nil || strings.Contains(err.Error(), "GARBAGE") {
		t.Fatalf("bad seed: %v", err)
	}
	if _, err := (ClientAuth{CredsFile: filepath.Join(dir, "missing.creds")}).Options(); err == nil {
		t.Fatal("missing creds file: no error")
	}
	opts, err := (ClientAuth{User: "u", Password: "p", InboxPrefix: "_INBOX_ACME"}).Options()
	if err != nil || len(opts) != 2 {
		t.Fatalf("Options = %d options, %v", len(opts), err)
	}
}

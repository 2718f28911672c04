package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	ejs "github.com/edihub/edihub/jetstream"
)

// childNATS never puts a secret on the worker's command line.
func TestChildNATSKeepsSecretsOffArgv(t *testing.T) {
	args, env := childNATS("nats://hub:Xyzzy42@127.0.0.1:4222", ejs.ClientAuth{User: "hub", Password: "Pw0rd-99", TLSCA: "/ca.pem"})
	argv := strings.Join(args, " ")
	if strings.Contains(argv, "Xyzzy42") || strings.Contains(argv, "Pw0rd-99") || strings.Contains(argv, "--server") {
		t.Fatalf("secret in argv: %q", argv)
	}
	if !strings.Contains(argv, "--user hub") || !strings.Contains(argv, "--tls-ca /ca.pem") {
		t.Fatalf("argv %q lacks the user or the CA path", argv)
	}
	e := strings.Join(env, " ")
	if !strings.Contains(e, "NATS_URL=nats://hub:Xyzzy42@") || !strings.Contains(e, "EDIHUB_NATS_PASSWORD=Pw0rd-99") {
		t.Fatalf("env %q", e)
	}
	args, env = childNATS("nats://127.0.0.1:4222", ejs.ClientAuth{User: "hub", PasswordFile: "/pw"})
	if strings.Join(args, " ") != "--server nats://127.0.0.1:4222 --user hub --password-file /pw" || len(env) != 0 {
		t.Fatalf("args %q env %q", args, env)
	}
}

func TestNATSAuthConfig(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "ops.pw")
	if err := os.WriteFile(pw, []byte("ops-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := `
nats:
  auth:
    users:
      - {name: edihub, role: hub, password_env: HUB_PW}
      - {name: oncall, role: operator, password_file: ` + pw + `}
      - {name: acme, role: partner, partner: ACME, nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4}
`
	c := loadTestConfig(t, good)
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HUB_PW": "hub-secret"}
	users, self, err := c.NATS.serverUsers(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 3 || users[1].Password != "ops-secret" || users[2].NKey == "" || users[2].Partner != "ACME" {
		t.Fatalf("users %+v", users)
	}
	if self.User != "edihub" || self.Password != "hub-secret" {
		t.Fatalf("serve connects as %q", self.User)
	}
	if _, _, err := c.NATS.serverUsers(func(string) string { return "" }); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("empty password env: %v", err)
	}
	for _, bad := range []string{
		"nats:\n  auth:\n    users:\n      - {name: a, role: operator, password_env: X}\n",                  // no hub
		"nats:\n  auth:\n    users:\n      - {name: a, role: hub}\n",                                        // no secret
		"nats:\n  auth:\n    users:\n      - {name: a, role: hub, password_env: X, password_file: f}\n",     // two
		"nats:\n  auth:\n    users:\n      - {name: a, role: boss, password_env: X}\n",                      // role
		"nats:\n  auth:\n    users:\n      - {name: a, role: partner, partner: A.B, password_env: X}\n",     // partner id
		"nats:\n  auth:\n    users:\n      - {name: a, role: hub, nkey: SUAXYZ}\n",                          // a seed
		"nats:\n  url: nats://x:4222\n  auth:\n    users:\n      - {name: a, role: hub, password_env: X}\n", // external
		"nats:\n  user: a\n  creds: /c\n",                                                                   // two ways
	} {
		c := loadTestConfig(t, bad)
		if err := c.Complete(); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

func loadTestConfig(t *testing.T, y string) *Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The three nats-server configs of deploy/cluster parse in the real
// nats-server (with the generated permissions next to them, as the
// comments say).
func TestDeployNATSConfigsParse(t *testing.T) {
	bin := natsServerBinary(t)
	dir := t.TempDir()
	perms, err := os.ReadFile(filepath.Join("..", "configs", "nats-permissions.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nats-permissions.conf"), perms, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"nats-1.conf", "nats-2.conf", "nats-3.conf"} {
		b, err := os.ReadFile(filepath.Join("..", "deploy", "cluster", n))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-t", "-c", p)
		cmd.Env = append(os.Environ(), "EDIHUB_NATS_PASSWORD=x", "OPERATOR_NATS_PASSWORD=y", "ACME_NATS_PASSWORD=z", "BETA_NATS_PASSWORD=w")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nats-server -t -c %s: %v\n%s", n, err, out)
		}
	}
}

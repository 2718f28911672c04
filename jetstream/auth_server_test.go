package jetstream

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edihub/edihub/internal/testcert"
	"github.com/nats-io/nats-server/v2/server"
)

// A user nkey for tests only.
const (
	testNKeySeed = "SUAIM2PMCBTTROZM2CGNEJXRUX6SFN5BFRQUXFRUJTDGBG7SKSBI3XHGR4"
	testNKeyPub  = "UAY7UDQ26Y6TBFN6ECGO4B2DKH2LHW6Y2XTIEPGUG3ZEKFZGK2U2AAC4"
)

// TestClientAuthNKey: --nkey with a seed file authenticates as the nkey
// user of the embedded server.
func TestClientAuthNKey(t *testing.T) {
	s, err := StartServer(&ServerOptions{DataDir: t.TempDir(), Listen: "127.0.0.1:-1",
		Users: []AuthUser{{Name: "oncall", NKey: testNKeyPub, Role: RoleOperator}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	seed := filepath.Join(t.TempDir(), "oncall.nk")
	if err := os.WriteFile(seed, []byte(testNKeySeed+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := (ClientAuth{NKeyFile: seed}).Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, _, err := Connect(s.ClientURL(), "nkey", opts...)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if nc, _, err := Connect(s.ClientURL(), "anonymous"); err == nil {
		nc.Close()
		t.Fatal("anonymous client accepted")
	}
}

// TestClientAuthTLS: --tls-ca verifies the server, --tls-cert/--tls-key
// is the client certificate a server with verify requires.
func TestClientAuthTLS(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := testcert.New(t, nil, nil, "test CA", true)
	srvCert, srvKey := testcert.New(t, ca, caKey, "127.0.0.1", false)
	cliCert, cliKey := testcert.New(t, ca, caKey, "edihub", false)
	caFile := testcert.WritePEM(t, filepath.Join(dir, "ca.pem"), testcert.CertBlock(ca))
	srvCertFile := testcert.WritePEM(t, filepath.Join(dir, "server.pem"), testcert.CertBlock(srvCert))
	srvKeyFile := testcert.WritePEM(t, filepath.Join(dir, "server-key.pem"), testcert.KeyBlock(t, srvKey))
	cliCertFile := testcert.WritePEM(t, filepath.Join(dir, "client.pem"), testcert.CertBlock(cliCert))
	cliKeyFile := testcert.WritePEM(t, filepath.Join(dir, "client-key.pem"), testcert.KeyBlock(t, cliKey))

	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: srvCertFile, KeyFile: srvKeyFile, CaFile: caFile, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, TLSConfig: tc, TLSVerify: true, TLSTimeout: 2})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(5 * time.Second) {
		t.Fatal("TLS server not ready")
	}
	url := "tls://" + s.Addr().String()

	opts, err := (ClientAuth{TLSCA: caFile, TLSCert: cliCertFile, TLSKey: cliKeyFile}).Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, _, err := Connect(url, "tls", opts...)
	if err != nil {
		t.Fatalf("with CA and client certificate: %v", err)
	}
	if !nc.TLSRequired() {
		t.Error("connection is not TLS")
	}
	nc.Close()
	opts, _ = (ClientAuth{TLSCA: caFile}).Options()
	if nc, _, err := Connect(url, "no client cert", opts...); err == nil {
		nc.Close()
		t.Fatal("connected without the client certificate the server requires")
	}
}

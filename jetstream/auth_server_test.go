package jetstream

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	ca, caKey := newCert(t, nil, nil, "test CA", true)
	srvCert, srvKey := newCert(t, ca, caKey, "127.0.0.1", false)
	cliCert, cliKey := newCert(t, ca, caKey, "edihub", false)
	write := func(name string, blocks ...*pem.Block) string {
		p := filepath.Join(dir, name)
		var b []byte
		for _, bl := range blocks {
			b = append(b, pem.EncodeToMemory(bl)...)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caFile := write("ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	keyBlock := func(k *ecdsa.PrivateKey) *pem.Block {
		b, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return &pem.Block{Type: "EC PRIVATE KEY", Bytes: b}
	}
	srvCertFile := write("server.pem", &pem.Block{Type: "CERTIFICATE", Bytes: srvCert.Raw})
	srvKeyFile := write("server-key.pem", keyBlock(srvKey))
	cliCertFile := write("client.pem", &pem.Block{Type: "CERTIFICATE", Bytes: cliCert.Raw})
	cliKeyFile := write("client-key.pem", keyBlock(cliKey))

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

func newCert(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, cn string, isCA bool) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		parent, parentKey = tmpl, key
	} else {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

package bridge

import (
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/internal/testcert"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Each SASL mechanism against kfake with SASL on: the bridge with the
// right password moves a record; the password never reaches the log.
func TestSASLMechanisms(t *testing.T) {
	t.Parallel()
	const pass = "s3cret-Pa55"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "sec.in"), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "plainuser", pass),
		kfake.Superuser("SCRAM-SHA-256", "scram256", pass),
		kfake.Superuser("SCRAM-SHA-512", "scram512", pass))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	for i, m := range []struct{ mech, user string }{{"PLAIN", "plainuser"}, {"SCRAM-SHA-256", "scram256"}, {"SCRAM-SHA-512", "scram512"}} {
		t.Run(m.mech, func(t *testing.T) {
			h := startNATS(t, 0)
			cfg := testConfig(brokers)
			cfg.Security.SASL = SASL{Mechanism: m.mech, Username: m.user}
			// The password from the environment, as ApplyEnv reads it.
			cfg.ApplyEnv(func(k string) string {
				if k == EnvKafkaPassword {
					return pass
				}
				return ""
			})
			cfg.Inbound = []InRoute{{Topic: "sec.in", Group: "g-" + m.user}}
			sec, err := cfg.Security.kafkaOpts()
			if err != nil {
				t.Fatal(err)
			}
			produce(t, kafkaClient(t, brokers, sec...), &kgo.Record{Topic: "sec.in", Key: []byte("ACME"), Value: []byte(m.mech)})
			r, logs := startBridgeLogged(t, h, cfg, nil)
			jetstreamtest.Eventually(t, 15*time.Second, func() bool { return h.count(t, "INGEST") == i+1 }, "records moved over %s", m.mech)
			r.stop(t)
			if strings.Contains(logs.String(), pass) {
				t.Fatal("the password is in the log")
			}
		})
	}
	// A wrong password: the brokers count as unreachable, said once.
	h := startNATS(t, 0)
	cfg := testConfig(brokers)
	cfg.HealthInterval = 100 * time.Millisecond
	cfg.Security.SASL = SASL{Mechanism: "SCRAM-SHA-256", Username: "scram256", Password: "wrong-" + pass}
	cfg.Inbound = []InRoute{{Topic: "sec.in"}}
	r, logs := startBridgeLogged(t, h, cfg, nil)
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return logs.count("Kafka brokers unreachable") == 1 }, "a failed login logged")
	r.stop(t)
	if strings.Contains(logs.String(), pass) {
		t.Fatal("the password is in the log")
	}
}

// TLS with a private CA and a client certificate the broker requires.
func TestTLSWithClientCertificate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, caKey := testcert.New(t, nil, nil, "edihub test CA", true)
	srv, srvKey := testcert.New(t, ca, caKey, "127.0.0.1", false)
	cli, cliKey := testcert.New(t, ca, caKey, "edihub-bridge", false)
	testcert.WritePEM(t, filepath.Join(dir, "ca.pem"), testcert.CertBlock(ca))
	testcert.WritePEM(t, filepath.Join(dir, "client.pem"), testcert.CertBlock(cli))
	testcert.WritePEM(t, filepath.Join(dir, "client.key"), testcert.KeyBlock(t, cliKey))
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	srvTLS := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{srv.Raw}, PrivateKey: srvKey}},
		ClientCAs:    pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "tls.in"), kfake.TLS(srvTLS))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	h := startNATS(t, 0)
	cfg := testConfig(brokers)
	cfg.Security.TLS = TLSConfig{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "client.pem"), KeyFile: filepath.Join(dir, "client.key")}
	cfg.Inbound = []InRoute{{Topic: "tls.in"}}
	sec, err := cfg.Security.kafkaOpts()
	if err != nil {
		t.Fatal(err)
	}
	produce(t, kafkaClient(t, brokers, sec...), &kgo.Record{Topic: "tls.in", Key: []byte("ACME"), Value: []byte("over TLS")})
	r := startBridge(t, h, cfg, nil)
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { return h.count(t, "INGEST") == 1 }, "a record moved over TLS")
	r.stop(t)

	bad := *cfg
	bad.Security.TLS.CAFile = filepath.Join(dir, "client.key")
	if _, err := (&bad.Security).kafkaOpts(); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("a CA file without a certificate: %v", err)
	}
}

func TestSecurityValidate(t *testing.T) {
	cfg := &Config{Brokers: []string{"k:1"}, Inbound: []InRoute{{Topic: "t"}},
		Security: Security{SASL: SASL{Mechanism: "GSSAPI", Password: "hunter2"}, TLS: TLSConfig{CertFile: "c.pem"}}}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), `mechanism "GSSAPI"`) || !strings.Contains(err.Error(), "cert_file and key_file") {
		t.Fatalf("%v", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatal("the password is in the error")
	}
}

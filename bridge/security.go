package bridge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Security is how the bridge authenticates to the brokers and encrypts
// the connection. Secrets come from the config, a file or the environment
// (ApplyEnv) and are never logged or put in an error message.
type Security struct {
	SASL SASL      `yaml:"sasl"`
	TLS  TLSConfig `yaml:"tls"`
}

// SASL is Kafka's SASL authentication.
type SASL struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 ("" = no SASL).
	Mechanism string `yaml:"mechanism"`
	Username  string `yaml:"username"`
	// Password, or PasswordFile naming a file that holds it (one line).
	// $EDIHUB_KAFKA_PASSWORD overrides both (see ApplyEnv).
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"password_file"`
}

// TLSConfig turns on TLS to the brokers.
type TLSConfig struct {
	// Enabled uses TLS with the system's roots unless CAFile is set.
	Enabled bool `yaml:"enabled"`
	// CAFile is a PEM bundle of the CAs that sign the brokers' certificates.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are the client certificate (mutual TLS).
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName overrides the name checked in the brokers' certificates.
	ServerName string `yaml:"server_name"`
}

// Environment variables ApplyEnv reads.
const (
	EnvKafkaUsername  = "EDIHUB_KAFKA_USERNAME"
	EnvKafkaPassword  = "EDIHUB_KAFKA_PASSWORD"
	EnvKafkaMechanism = "EDIHUB_KAFKA_SASL_MECHANISM"
)

// ApplyEnv takes the SASL mechanism, user name and password from the
// environment where set, so a secret need not be written into the config.
func (c *Config) ApplyEnv(getenv func(string) string) {
	if v := getenv(EnvKafkaMechanism); v != "" {
		c.Security.SASL.Mechanism = v
	}
	if v := getenv(EnvKafkaUsername); v != "" {
		c.Security.SASL.Username = v
	}
	if v := getenv(EnvKafkaPassword); v != "" {
		c.Security.SASL.Password = v
	}
}

func (s *Security) validate() []error {
	var errs []error
	switch m := strings.ToUpper(s.SASL.Mechanism); m {
	case "":
		if s.SASL.Username != "" {
			errs = append(errs, errors.New("security.sasl.username set without security.sasl.mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)"))
		}
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		if s.SASL.Username == "" {
			errs = append(errs, fmt.Errorf("security.sasl: %s needs a username (or $%s)", m, EnvKafkaUsername))
		}
		if s.SASL.Password == "" && s.SASL.PasswordFile == "" {
			errs = append(errs, fmt.Errorf("security.sasl: %s needs a password, a password_file or $%s", m, EnvKafkaPassword))
		}
	default:
		errs = append(errs, fmt.Errorf("security.sasl.mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.SASL.Mechanism))
	}
	if (s.TLS.CertFile == "") != (s.TLS.KeyFile == "") {
		errs = append(errs, errors.New("security.tls: cert_file and key_file go together"))
	}
	return errs
}

// kafkaOpts builds the client options of s, reading its files.
func (s *Security) kafkaOpts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if m := strings.ToUpper(s.SASL.Mechanism); m != "" {
		pass := s.SASL.Password
		if pass == "" {
			raw, err := os.ReadFile(s.SASL.PasswordFile)
			if err != nil {
				return nil, fmt.Errorf("security.sasl.password_file: %w", err)
			}
			// The first line, as the hub reads its NATS password file.
			pass, _, _ = strings.Cut(string(raw), "\n")
			pass = strings.TrimRight(pass, "\r")
			if pass == "" {
				return nil, fmt.Errorf("security.sasl.password_file %s is empty", s.SASL.PasswordFile)
			}
		}
		var mech sasl.Mechanism
		switch m {
		case "PLAIN":
			mech = plain.Auth{User: s.SASL.Username, Pass: pass}.AsMechanism()
		case "SCRAM-SHA-256":
			mech = scram.Auth{User: s.SASL.Username, Pass: pass}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			mech = scram.Auth{User: s.SASL.Username, Pass: pass}.AsSha512Mechanism()
		}
		opts = append(opts, kgo.SASL(mech))
	}
	t := s.TLS
	if t.Enabled || t.CAFile != "" || t.CertFile != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
		if t.CAFile != "" {
			pem, err := os.ReadFile(t.CAFile)
			if err != nil {
				return nil, fmt.Errorf("security.tls.ca_file: %w", err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("security.tls.ca_file %s: no PEM certificate in it", t.CAFile)
			}
		}
		if t.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("security.tls client certificate: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	return opts, nil
}

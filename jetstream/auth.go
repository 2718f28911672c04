package jetstream

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
)

// ClientAuth is how a client proves who it is to NATS, besides the URL.
// Every connection of edihub (serve, its sandbox worker, the bridge, every
// client command) turns it into nats.Options with Options, so that secrets
// never have to travel in a URL, a command line or a log line. The zero
// value adds nothing (anonymous, or whatever the URL says).
type ClientAuth struct {
	// CredsFile is a NATS credentials file (JWT and nkey seed, decentralised
	// auth).
	CredsFile string
	// NKeyFile is a file holding an nkey user seed (SU...).
	NKeyFile string
	// User and Password authenticate with user/password. Password is the
	// value itself (from an environment variable); PasswordFile a file whose
	// first line is the password. Set at most one of them.
	User         string
	Password     string
	PasswordFile string
	// TLSCA is a PEM file of CAs to trust for the server's certificate;
	// TLSCert and TLSKey a client certificate (both or neither).
	TLSCA   string
	TLSCert string
	TLSKey  string
	// InboxPrefix replaces _INBOX for replies, so that a user allowed to
	// subscribe only to its own inbox subjects (a partner) can still make
	// requests (JetStream publish acks).
	InboxPrefix string
}

// IsZero reports whether a adds nothing to the connection.
func (a ClientAuth) IsZero() bool { return a == ClientAuth{} }

// Validate reports a combination that cannot work, naming files but never
// a secret.
func (a ClientAuth) Validate() error {
	n := 0
	for _, s := range []string{a.CredsFile, a.NKeyFile, a.User} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return errors.New("nats auth: give one of creds, nkey or user (with a password)")
	}
	if a.Password != "" && a.PasswordFile != "" {
		return errors.New("nats auth: give the password either from the environment or from a file, not both")
	}
	if (a.Password != "" || a.PasswordFile != "") && a.User == "" {
		return errors.New("nats auth: a password needs a user")
	}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		return errors.New("nats tls: a client certificate needs its key (tls cert and tls key together)")
	}
	if a.InboxPrefix != "" && (strings.ContainsAny(a.InboxPrefix, "*> \t") || strings.HasSuffix(a.InboxPrefix, ".")) {
		return fmt.Errorf("nats inbox prefix %q: no wildcards, spaces or trailing dot", a.InboxPrefix)
	}
	return nil
}

// ReadPassword returns the password: Password, or the first line of
// PasswordFile.
func (a ClientAuth) ReadPassword() (string, error) {
	if a.PasswordFile == "" {
		return a.Password, nil
	}
	b, err := os.ReadFile(a.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("nats password file: %w", err)
	}
	pw, _, _ := strings.Cut(string(b), "\n")
	pw = strings.TrimRight(pw, "\r")
	if pw == "" {
		return "", fmt.Errorf("nats password file %s is empty", a.PasswordFile)
	}
	return pw, nil
}

// Options turns a into nats.Options. Files are read now, so that a missing
// one is reported before dialling; errors name the file, never its content.
func (a ClientAuth) Options() ([]nats.Option, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	var opts []nats.Option
	switch {
	case a.CredsFile != "":
		if _, err := os.Stat(a.CredsFile); err != nil {
			return nil, fmt.Errorf("nats creds file: %w", err)
		}
		opts = append(opts, nats.UserCredentials(a.CredsFile))
	case a.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(a.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("nats nkey seed file %s: %s", a.NKeyFile, scrub(err.Error()))
		}
		opts = append(opts, o)
	case a.User != "":
		pw, err := a.ReadPassword()
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfo(a.User, pw))
	}
	if a.TLSCA != "" {
		opts = append(opts, nats.RootCAs(a.TLSCA))
	}
	if a.TLSCert != "" {
		opts = append(opts, nats.ClientCert(a.TLSCert, a.TLSKey))
	}
	if a.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(a.InboxPrefix))
	}
	return opts, nil
}

// scrub keeps an error from a seed parser short and free of key material.
func scrub(s string) string {
	if i := strings.Index(s, "SU"); i >= 0 {
		return s[:i] + "[redacted]"
	}
	return s
}

// RedactURL removes the password (or token) from every URL of a
// comma-separated NATS server list, for logs and error messages:
// nats://hub:secret@host:4222 becomes nats://hub:REDACTED@host:4222 and
// nats://s3cret@host (a token) nats://REDACTED@host.
func RedactURL(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = redactOne(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}

func redactOne(p string) string {
	at := strings.LastIndex(p, "@")
	if at < 0 {
		return p
	}
	start := 0
	if i := strings.Index(p, "://"); i >= 0 && i < at {
		start = i + 3
	}
	userinfo := p[start:at]
	if user, _, ok := strings.Cut(userinfo, ":"); ok {
		return p[:start] + user + ":REDACTED" + p[at:]
	}
	return p[:start] + "REDACTED" + p[at:]
}

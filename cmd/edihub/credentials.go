package main

import (
	"flag"
	"net/url"
	"strings"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/app"
	"github.com/edihub/edihub/escape"
	ejs "github.com/edihub/edihub/jetstream"
)

// Environment variables for NATS credentials. A password is never a flag:
// flags are visible in ps and /proc/<pid>/cmdline.
const (
	envNATSPassword = app.EnvNATSPassword
	envNATSUser     = app.EnvNATSUser
)

// authFlags are the NATS credential flags of every command that connects
// (serve, the bridge, every client command).
type authFlags struct {
	creds, nkey, user, passwordFile string
	tlsCA, tlsCert, tlsKey          string
	inboxPrefix                     string
}

func (a *authFlags) register(fs *flag.FlagSet, e *env) {
	shared(fs, func() { a.registerFlags(fs) })
}

func (a *authFlags) registerFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.creds, "creds", "", "NATS credentials `file` (JWT + nkey seed)")
	fs.StringVar(&a.nkey, "nkey", "", "NATS nkey seed `file`")
	fs.StringVar(&a.user, "user", "", "NATS user (default $"+envNATSUser+" unless --creds or --nkey); the password from --password-file or $"+envNATSPassword)
	fs.StringVar(&a.passwordFile, "password-file", "", "`file` whose first line is the NATS password (instead of $"+envNATSPassword+")")
	fs.StringVar(&a.tlsCA, "tls-ca", "", "PEM `file` of CAs that sign the NATS server's certificate")
	fs.StringVar(&a.tlsCert, "tls-cert", "", "client certificate PEM `file` for NATS (with --tls-key)")
	fs.StringVar(&a.tlsKey, "tls-key", "", "client key PEM `file` for NATS (with --tls-cert)")
	fs.StringVar(&a.inboxPrefix, "inbox-prefix", "", "reply subject prefix instead of _INBOX (partners: _INBOX_<partner>)")
}

// clientAuth resolves the flags; the password comes from --password-file
// or the environment, never from argv.
func (a *authFlags) clientAuth(getenv func(string) string) ejs.ClientAuth {
	c := ejs.ClientAuth{CredsFile: a.creds, NKeyFile: a.nkey, User: a.user, PasswordFile: a.passwordFile,
		TLSCA: a.tlsCA, TLSCert: a.tlsCert, TLSKey: a.tlsKey, InboxPrefix: a.inboxPrefix}
	if c.User == "" && c.CredsFile == "" && c.NKeyFile == "" {
		c.User = getenv(envNATSUser)
	}
	if c.User != "" && c.PasswordFile == "" {
		c.Password = getenv(envNATSPassword)
	}
	return c
}

// connectWith dials url with auth and extra options: the one way commands
// connect. Errors (bad credential settings, an unreachable or refusing
// server) name no password; callers report them with exit code 2.
func connectWith(url, name string, auth ejs.ClientAuth, extra ...nats.Option) (*nats.Conn, js.JetStream, error) {
	if err := checkServerURL(url); err != nil {
		return nil, nil, err
	}
	opts, err := auth.Options()
	if err != nil {
		return nil, nil, err
	}
	return ejs.Connect(url, name, append(opts, extra...)...)
}

// connect dials the hub with the command's --server and credentials.
func (c *clientFlags) connect(name string, extra ...nats.Option) (*nats.Conn, js.JetStream, error) {
	return connectWith(c.server, name, c.auth.clientAuth(c.getenv), extra...)
}

// applyAuthFlags lets serve's credential flags override the nats section.
func applyAuthFlags(cfg *app.NATSConfig, fs *flag.FlagSet, a *authFlags) {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "creds":
			cfg.Creds = a.creds
		case "nkey":
			cfg.NKey = a.nkey
		case "user":
			cfg.User = a.user
		case "password-file":
			cfg.PasswordFile = a.passwordFile
		case "tls-ca":
			cfg.TLS.CA = a.tlsCA
		case "tls-cert":
			cfg.TLS.Cert = a.tlsCert
		case "tls-key":
			cfg.TLS.Key = a.tlsKey
		}
	})
}

// checkServerURL refuses, before dialling, what --server must not be: a
// URL with credentials in it (visible in ps, /proc and shell history, and
// taken silently) and an HTTP address (the hub's API and console, where no
// NATS server answers: dialling it would only say the hub is down).
func checkServerURL(s string) error {
	for _, one := range strings.Split(s, ",") {
		u, err := url.Parse(strings.TrimSpace(one))
		if err != nil || u.Host == "" {
			continue // nats.go says what is wrong with it
		}
		shown := escape.Line(ejs.RedactURL(one))
		if u.User != nil {
			return usageErr("--server %s has credentials in the URL, which ps and the shell history show: give the server as nats://host:port and the user with --user (password from --password-file or $%s), or --creds / --nkey", shown, envNATSPassword)
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
			return usageErr("--server %s is an HTTP address (the hub's /readyz, API and console); --server wants the hub's NATS URL, nats://host:port (default nats://127.0.0.1:4222; serve's start-up log names it as \"nats\")", shown)
		}
	}
	return nil
}

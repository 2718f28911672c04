package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

// Environment variables for NATS credentials. A password is never a flag:
// flags are visible in ps and /proc/<pid>/cmdline.
const (
	envNATSPassword = "EDIHUB_NATS_PASSWORD"
	envNATSUser     = "EDIHUB_NATS_USER"
	envNATSURL      = "NATS_URL"
)

// authFlags are the NATS credential flags of every command that connects
// (serve, the bridge, every client command).
type authFlags struct {
	creds, nkey, user, passwordFile string
	tlsCA, tlsCert, tlsKey          string
	inboxPrefix                     string
}

func (a *authFlags) register(fs *flag.FlagSet, e *env) {
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

// childNATS is how serve hands its NATS connection settings to a child
// process (the sandbox worker): file paths and the user name as flags,
// secrets in the child's environment only. A URL with a password or token
// in it goes to the child as $NATS_URL, not as --server.
func childNATS(url string, a ejs.ClientAuth) (args, env []string) {
	if strings.Contains(url, "@") {
		env = append(env, envNATSURL+"="+url)
	} else {
		args = append(args, "--server", url)
	}
	flag := func(name, v string) {
		if v != "" {
			args = append(args, "--"+name, v)
		}
	}
	flag("creds", a.CredsFile)
	flag("nkey", a.NKeyFile)
	flag("user", a.User)
	flag("password-file", a.PasswordFile)
	flag("tls-ca", a.TLSCA)
	flag("tls-cert", a.TLSCert)
	flag("tls-key", a.TLSKey)
	flag("inbox-prefix", a.InboxPrefix)
	if a.Password != "" && a.PasswordFile == "" {
		env = append(env, envNATSPassword+"="+a.Password)
	}
	return args, env
}

// natsTLS is nats.tls in the config.
type natsTLS struct {
	CA   string `yaml:"ca"`   // PEM CAs of the server's certificate
	Cert string `yaml:"cert"` // client certificate
	Key  string `yaml:"key"`  // its key
}

// natsAuth is nats.auth: users of the embedded server.
type natsAuth struct {
	Users []natsUser `yaml:"users"`
}

// natsUser is one user of the embedded server. Its permissions are those
// of its role, from the one role table (jetstream.RolePermissions) that
// configs/nats-permissions.conf is generated from.
type natsUser struct {
	Name string `yaml:"name"`
	// Role: hub, operator or partner.
	Role string `yaml:"role"`
	// Partner is the partner ID of a partner user.
	Partner string `yaml:"partner,omitempty"`
	// PasswordEnv names the environment variable holding the password;
	// PasswordFile a file whose first line is it. NKey is a public user
	// nkey (U...) instead of a password.
	PasswordEnv  string `yaml:"password_env,omitempty"`
	PasswordFile string `yaml:"password_file,omitempty"`
	NKey         string `yaml:"nkey,omitempty"`
}

// clientAuth is serve's own credentials from the nats section.
func (n *natsConfig) clientAuth(getenv func(string) string) ejs.ClientAuth {
	c := ejs.ClientAuth{CredsFile: n.Creds, NKeyFile: n.NKey, User: n.User, PasswordFile: n.PasswordFile,
		TLSCA: n.TLS.CA, TLSCert: n.TLS.Cert, TLSKey: n.TLS.Key}
	if c.User == "" && c.CredsFile == "" && c.NKeyFile == "" {
		c.User = getenv(envNATSUser)
	}
	if c.User != "" && c.PasswordFile == "" && n.PasswordEnv != "" {
		c.Password = getenv(n.PasswordEnv)
	}
	return c
}

// validateAuth checks the nats section's credentials and users without
// reading secrets (they are resolved when serve starts).
func (n *natsConfig) validateAuth() error {
	if err := n.clientAuth(func(string) string { return "" }).Validate(); err != nil {
		return fmt.Errorf("nats: %v", err)
	}
	if len(n.Auth.Users) == 0 {
		return nil
	}
	if n.URL != "" {
		return errors.New("nats.auth configures the embedded server's users; with nats.url the external server has its own (configs/nats-permissions.conf)")
	}
	seen := map[string]bool{}
	hubs := 0
	for i, u := range n.Auth.Users {
		if u.Name == "" && u.NKey == "" {
			return fmt.Errorf("nats.auth.users[%d]: no name", i)
		}
		if seen[u.Name] {
			return fmt.Errorf("nats.auth.users: %q twice", u.Name)
		}
		seen[u.Name] = true
		secrets := 0
		for _, s := range []string{u.PasswordEnv, u.PasswordFile, u.NKey} {
			if s != "" {
				secrets++
			}
		}
		if secrets != 1 {
			return fmt.Errorf("nats.auth user %q: give exactly one of password_env, password_file, nkey", u.Name)
		}
		if u.NKey != "" && !strings.HasPrefix(u.NKey, "U") {
			return fmt.Errorf("nats.auth user %q: nkey must be a public user key (U...), not a seed", u.Name)
		}
		if u.Role == string(ejs.RolePartner) {
			if err := wire.ValidPartnerID(u.Partner); err != nil {
				return fmt.Errorf("nats.auth user %q: %v", u.Name, err)
			}
		}
		if _, err := ejs.RolePermissions(ejs.Role(u.Role), u.Partner, ejs.AuthNames{}); err != nil {
			return fmt.Errorf("nats.auth user %q: %v", u.Name, err)
		}
		if u.Role != string(ejs.RolePartner) && u.Partner != "" {
			return fmt.Errorf("nats.auth user %q: partner is for role partner only", u.Name)
		}
		if u.Role == string(ejs.RoleHub) {
			hubs++
		}
	}
	if hubs == 0 {
		return errors.New("nats.auth: no user with role hub (serve connects as it)")
	}
	return nil
}

// serverUsers resolves the users' secrets for the embedded server and
// returns the credentials serve connects with: the nats section's own if
// any, else the first hub user's name and password.
func (n *natsConfig) serverUsers(getenv func(string) string) ([]ejs.AuthUser, ejs.ClientAuth, error) {
	self := n.clientAuth(getenv)
	var users []ejs.AuthUser
	var hub *ejs.AuthUser
	for _, u := range n.Auth.Users {
		au := ejs.AuthUser{Name: u.Name, NKey: u.NKey, Role: ejs.Role(u.Role), Partner: u.Partner}
		switch {
		case u.PasswordEnv != "":
			au.Password = getenv(u.PasswordEnv)
			if au.Password == "" {
				return nil, self, fmt.Errorf("nats.auth user %q: $%s is empty", u.Name, u.PasswordEnv)
			}
		case u.PasswordFile != "":
			pw, err := (ejs.ClientAuth{User: u.Name, PasswordFile: u.PasswordFile}).ReadPassword()
			if err != nil {
				return nil, self, fmt.Errorf("nats.auth user %q: %v", u.Name, err)
			}
			au.Password = pw
		}
		users = append(users, au)
		if hub == nil && au.Role == ejs.RoleHub {
			hub = &users[len(users)-1]
		}
	}
	if self.CredsFile == "" && self.NKeyFile == "" && self.User == "" && hub != nil {
		if hub.Password == "" {
			return nil, self, fmt.Errorf("nats.auth: the hub user %q has an nkey; give serve its seed in nats.nkey", hub.Name)
		}
		self.User, self.Password = hub.Name, hub.Password
	}
	return users, self, nil
}

// applyAuthFlags lets serve's credential flags override the nats section.
func applyAuthFlags(cfg *natsConfig, fs *flag.FlagSet, a *authFlags) {
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

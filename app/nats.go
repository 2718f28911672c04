package app

import (
	"errors"
	"fmt"
	"strings"

	ejs "github.com/edihub/edihub/jetstream"
)

// Environment variables for NATS credentials. A password is never a flag:
// flags are visible in ps and /proc/<pid>/cmdline.
const (
	EnvNATSPassword = "EDIHUB_NATS_PASSWORD"
	EnvNATSUser     = "EDIHUB_NATS_USER"
	EnvNATSURL      = "NATS_URL"
)

// childNATS is how serve hands its NATS connection settings to a child
// process (the sandbox worker): file paths and the user name as flags,
// secrets in the child's environment only. A URL with a password or token
// in it goes to the child as $NATS_URL, not as --server.
func childNATS(url string, a ejs.ClientAuth) (args, env []string) {
	if strings.Contains(url, "@") {
		env = append(env, EnvNATSURL+"="+url)
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
		env = append(env, EnvNATSPassword+"="+a.Password)
	}
	return args, env
}

// NATSTLS is nats.tls in the config.
type NATSTLS struct {
	CA   string `yaml:"ca"`   // PEM CAs of the server's certificate
	Cert string `yaml:"cert"` // client certificate
	Key  string `yaml:"key"`  // its key
}

// NATSAuth is nats.auth: users of the embedded server.
type NATSAuth struct {
	Users []NATSUser `yaml:"users"`
}

// NATSUser is one user of the embedded server. Its permissions are those
// of its role, from the one role table (jetstream.RolePermissions) that
// configs/nats-permissions.conf is generated from.
type NATSUser struct {
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

// ClientAuth is serve's own credentials from the nats section.
func (n *NATSConfig) ClientAuth(getenv func(string) string) ejs.ClientAuth {
	c := ejs.ClientAuth{CredsFile: n.Creds, NKeyFile: n.NKey, User: n.User, PasswordFile: n.PasswordFile,
		TLSCA: n.TLS.CA, TLSCert: n.TLS.Cert, TLSKey: n.TLS.Key}
	if c.User == "" && c.CredsFile == "" && c.NKeyFile == "" {
		c.User = getenv(EnvNATSUser)
	}
	if c.User != "" && c.PasswordFile == "" && n.PasswordEnv != "" {
		c.Password = getenv(n.PasswordEnv)
	}
	return c
}

// validateAuth checks the nats section's credentials and users without
// reading secrets (they are resolved when serve starts).
func (n *NATSConfig) validateAuth() error {
	if err := n.ClientAuth(func(string) string { return "" }).Validate(); err != nil {
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
func (n *NATSConfig) serverUsers(getenv func(string) string) ([]ejs.AuthUser, ejs.ClientAuth, error) {
	self := n.ClientAuth(getenv)
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

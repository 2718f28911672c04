package api

import (
	"errors"
	"fmt"
	"strings"
)

// API roles: read may list, inspect, show (audited), dry-run and read the
// audit trail; operator may also replay, park, drop and edit.
const (
	RoleRead     = "read"
	RoleOperator = "operator"
)

// Token is one bearer token of the HTTP API. Name is the actor in
// audit events, so give each person or system its own token.
type Token struct {
	Name  string
	Token string
	Role  string
}

// Config is the api: section of the config file. Without tokens the
// API is not mounted: there is no anonymous access at all.
type Config struct {
	Tokens []TokenConfig `yaml:"tokens"`
}

// TokenConfig is one token; the secret comes from token or, better,
// from the environment variable named by token_env (keeps it out of files).
type TokenConfig struct {
	Name     string `yaml:"name"`
	Token    string `yaml:"token"`
	TokenEnv string `yaml:"token_env"`
	Role     string `yaml:"role"` // read (default) or operator
}

// minTokenLen keeps guessable tokens out: 16 bytes from a password manager
// or `openssl rand -hex 24`.
const minTokenLen = 16

// SetDefaults gives tokens without a role the read role (least privilege).
func (c *Config) SetDefaults() {
	for i := range c.Tokens {
		if c.Tokens[i].Role == "" {
			c.Tokens[i].Role = RoleRead
		}
	}
}

// Validate reports every token setting that cannot work.
func (c *Config) Validate() error {
	var errs []error
	names := map[string]bool{}
	for i, t := range c.Tokens {
		at := fmt.Sprintf("api.tokens[%d]", i)
		if t.Name == "" || strings.ContainsFunc(t.Name, func(r rune) bool { return r <= ' ' || r > '~' }) {
			errs = append(errs, fmt.Errorf("%s.name %q: required, printable ASCII without spaces (it names the actor in the audit trail)", at, t.Name))
		}
		if names[t.Name] {
			errs = append(errs, fmt.Errorf("%s.name %q: listed twice", at, t.Name))
		}
		names[t.Name] = true
		if (t.Token == "") == (t.TokenEnv == "") {
			errs = append(errs, fmt.Errorf("%s (%s): set exactly one of token and token_env", at, t.Name))
		}
		if t.Token != "" && len(t.Token) < minTokenLen {
			errs = append(errs, fmt.Errorf("%s (%s): token shorter than %d characters", at, t.Name, minTokenLen))
		}
		if t.Role != RoleRead && t.Role != RoleOperator {
			errs = append(errs, fmt.Errorf("%s (%s): role %q, want read or operator", at, t.Name, t.Role))
		}
	}
	return errors.Join(errs...)
}

// Resolve reads token_env secrets and returns the tokens for New. A
// token_env that is unset or short is an error: starting with a token
// nobody can present would hide a deployment mistake.
func (c Config) Resolve(getenv func(string) string) ([]Token, error) {
	var out []Token
	for _, t := range c.Tokens {
		secret := t.Token
		if t.TokenEnv != "" {
			secret = getenv(t.TokenEnv)
			if len(secret) < minTokenLen {
				return nil, fmt.Errorf("api token %s: $%s is unset or shorter than %d characters", t.Name, t.TokenEnv, minTokenLen)
			}
		}
		out = append(out, Token{Name: t.Name, Token: secret, Role: t.Role})
	}
	return out, nil
}

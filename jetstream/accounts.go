package jetstream

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// HubAccount is the NATS account that holds every stream and bucket of the
// hub. Its users are the hub and the operators; nobody else ever connects
// to it.
const HubAccount = "HUB"

// PartnerAccount is the account of one partner: its users publish their
// interchanges and read their own results through imports from HubAccount,
// and nothing they publish (nor any reply the server sends them) is ever
// delivered inside HubAccount on a subject they chose.
func PartnerAccount(partner string) string { return "PARTNER_" + partner }

// Why accounts and not only permissions: a JetStream publish is answered
// with a PubAck sent to the publisher's reply subject, and permissions check
// the publish subject only, so within one account a user allowed to publish
// to its ingest subject could make the server store a PubAck on any subject
// of any stream (AUDIT, the ledger and ticket buckets, another partner's
// ingest, POISON, a DLQ). A partner's publish crosses into HubAccount through
// a service import, and the server replaces its reply subject by one of its
// own (_R_...) whose answer it routes back to the partner's account: the
// PubAck can only land where the partner itself could have published.

// PasswordPlaceholder is written for a user whose password is a value
// (embedded server): StartServer sets the real password on the parsed user,
// so a secret never appears in a config text.
const PasswordPlaceholder = "edihub-password-set-after-parse"

// AccountsConf renders nats-server's accounts block for users: the hub and
// operators in HubAccount (with JetStream), each partner in an account of
// its own with exactly the imports of its subjects. A user's secret is an
// nkey, an environment variable of nats-server (PasswordEnv) or, for the
// embedded server, PasswordPlaceholder.
func AccountsConf(users []AuthUser, names AuthNames) ([]byte, error) {
	n := names.withDefaults()
	byAccount := map[string][]AuthUser{}
	var partners []string
	seen := map[string]bool{}
	for _, u := range users {
		acc := HubAccount
		if u.Role == RolePartner {
			acc = PartnerAccount(u.Partner)
			if !seen[u.Partner] {
				seen[u.Partner] = true
				partners = append(partners, u.Partner)
			}
		}
		byAccount[acc] = append(byAccount[acc], u)
	}
	sort.Strings(partners)
	var b bytes.Buffer
	b.WriteString("accounts {\n")
	fmt.Fprintf(&b, "  %s {\n    jetstream: enabled\n", HubAccount)
	if err := writeUsers(&b, byAccount[HubAccount], n); err != nil {
		return nil, err
	}
	if len(partners) > 0 {
		b.WriteString("    exports = [\n")
		for _, p := range partners {
			acc := PartnerAccount(p)
			fmt.Fprintf(&b, "      # %s\n", p)
			for _, e := range partnerExports(p, n) {
				kind := "service"
				if e.pubsub {
					kind = "stream"
				}
				fmt.Fprintf(&b, "      { %s: %q, accounts: [%q] }\n", kind, e.subject, acc)
			}
		}
		b.WriteString("    ]\n")
	}
	b.WriteString("  }\n")
	for _, p := range partners {
		acc := PartnerAccount(p)
		fmt.Fprintf(&b, "  %q {\n", acc)
		if err := writeUsers(&b, byAccount[acc], n); err != nil {
			return nil, err
		}
		b.WriteString("    imports = [\n")
		for _, e := range partnerExports(p, n) {
			kind := "service"
			if e.pubsub {
				kind = "stream"
			}
			fmt.Fprintf(&b, "      { %s: { account: %q, subject: %q } }\n", kind, HubAccount, e.subject)
		}
		b.WriteString("    ]\n  }\n")
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// export is one subject HubAccount shares with a partner's account.
type export struct {
	subject string
	pubsub  bool // a stream export (messages flow to the partner), else a service
}

// partnerExports is the one list of what a partner's account reaches of
// HubAccount: its ingest subject (a service, so the reply is the server's)
// and its upload subjects (a service, likewise: the stream UPLOAD stores
// the chunks in HubAccount, the partner reads nothing back) and its
// results and acknowledgements (streams). No JetStream API: a
// consumer's config could name a deliver subject inside HubAccount, and a
// real nats-server 2.15 answers a partner's imported consumer requests
// with "JetStream not enabled for account".
func partnerExports(p string, _ AuthNames) []export {
	return []export{
		{subject: "edi.ingest." + p},
		{subject: "edi.upload." + p + ".>"}, // an upload's chunks: a service too, for the same reason
		{subject: "edi.parsed." + p + ".>", pubsub: true},
		{subject: "edi.outbound." + p + ".>", pubsub: true},
	}
}

func writeUsers(b *bytes.Buffer, users []AuthUser, n AuthNames) error {
	if len(users) == 0 {
		return nil
	}
	b.WriteString("    users = [\n")
	for _, u := range users {
		p, err := RolePermissions(u.Role, u.Partner, n)
		if err != nil {
			return fmt.Errorf("nats user %q: %w", u.Name, err)
		}
		var secret string
		switch {
		case u.NKey != "" && (u.Password != "" || u.PasswordEnv != ""):
			return fmt.Errorf("nats user %q: a password or an nkey, not both", u.Name)
		case u.NKey != "":
			if !strings.HasPrefix(u.NKey, "U") || strings.ContainsAny(u.NKey, "\" \t\n") {
				return fmt.Errorf("nats user %q: nkey must be a public user key (U...)", u.Name)
			}
			secret = fmt.Sprintf("nkey: %q", u.NKey)
		case u.PasswordEnv != "":
			if strings.ContainsAny(u.PasswordEnv, " \t\n\"$.{}") {
				return fmt.Errorf("nats user %q: bad password variable %q", u.Name, u.PasswordEnv)
			}
			secret = fmt.Sprintf("user: %q, password: $%s", u.Name, u.PasswordEnv)
		case u.Password != "":
			secret = fmt.Sprintf("user: %q, password: %q", u.Name, PasswordPlaceholder)
		default:
			return fmt.Errorf("nats user %q: no password and no nkey", u.Name)
		}
		if strings.ContainsAny(u.Name, "\"\n") {
			return fmt.Errorf("nats user %q: quotes or newlines in the name", u.Name)
		}
		fmt.Fprintf(b, "      # %s\n", userComment(u))
		fmt.Fprintf(b, "      { %s, permissions: {\n", secret)
		writePerms(b, "publish", p.PublishAllow, p.PublishDeny)
		writePerms(b, "subscribe", p.SubscribeAllow, p.SubscribeDeny)
		b.WriteString("      } }\n")
	}
	b.WriteString("    ]\n")
	return nil
}

func userComment(u AuthUser) string {
	if u.Role == RolePartner {
		return fmt.Sprintf("%s: partner %s", u.Name, u.Partner)
	}
	return fmt.Sprintf("%s: %s", u.Name, u.Role)
}

func writePerms(b *bytes.Buffer, key string, allow, deny []string) {
	fmt.Fprintf(b, "        %s: {\n", key)
	list := func(k string, subjects []string) {
		if len(subjects) == 0 {
			return
		}
		fmt.Fprintf(b, "          %s: [\n", k)
		for _, s := range subjects {
			fmt.Fprintf(b, "            %q\n", s)
		}
		b.WriteString("          ]\n")
	}
	list("allow", allow)
	list("deny", deny)
	b.WriteString("        }\n")
}

// applyAccounts configures sopts with the accounts of users, as
// AccountsConf renders them for an external server.
func applyAccounts(sopts *server.Options, users []AuthUser, names AuthNames) error {
	for _, u := range users {
		if u.PasswordEnv != "" {
			return fmt.Errorf("nats user %q: the embedded server takes the password itself, not a variable", u.Name)
		}
	}
	conf, err := AccountsConf(users, names)
	if err != nil {
		return err
	}
	if err := sopts.ProcessConfigString(string(conf)); err != nil {
		return fmt.Errorf("embedded nats server accounts: %w", err)
	}
	pw := map[string]string{}
	for _, u := range users {
		if u.Password != "" {
			pw[u.Name] = u.Password
		}
	}
	for _, su := range sopts.Users {
		p, ok := pw[su.Username]
		if !ok || su.Password != PasswordPlaceholder {
			return fmt.Errorf("embedded nats server accounts: user %q has no password", su.Username)
		}
		su.Password = p
	}
	return nil
}

package jetstream

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// Role is what a NATS user of edihub may do. The one definition of the
// roles is RolePermissions: the embedded server's users are built from it,
// and configs/nats-permissions.conf (for an external server or cluster) is
// rendered from it by PermissionsConf (a test fails when the file differs;
// `go test ./jetstream -run TestPermissionsConf -update` rewrites it).
type Role string

const (
	// RoleHub is `edihub serve` (and its sandbox worker, the bridge and the
	// HTTP API, which act through its connection or its credentials).
	RoleHub Role = "hub"
	// RoleOperator runs the runbook: dlq, poison, audit, drill, send.
	RoleOperator Role = "operator"
	// RolePartner publishes its interchanges and reads its own results.
	RolePartner Role = "partner"
)

// AuthNames are the streams and buckets the permissions name; the zero
// fields take the defaults (DefaultAuthNames).
type AuthNames struct {
	Ingest, Parsed, DLQ, Parking, Poison, Audit string
	// Buckets: DLQ edits, forensic tickets (KV), forensic reports (object
	// store), interchange ledger and attempt records (KV).
	Edits, Tickets, Forensic, Ledger, Attempts string
	// Buckets of a hub that shares a cluster with others: singleton
	// leases and shared alert limits (KV).
	Leases, AlertLimits string
}

// DefaultAuthNames are the default stream and bucket names.
func DefaultAuthNames() AuthNames {
	return AuthNames{
		Ingest: "INGEST", Parsed: "PARSED", DLQ: "DLQ", Parking: "PARKING", Poison: "POISON", Audit: "AUDIT",
		Edits: "dlq-edits", Tickets: "tickets", Forensic: "forensic", Ledger: "edihub-ledger", Attempts: "edihub-attempts",
		Leases: "edihub-leases", AlertLimits: "edihub-alert-limits",
	}
}

func (n AuthNames) withDefaults() AuthNames {
	d := DefaultAuthNames()
	set := func(p *string, def string) {
		if *p == "" {
			*p = def
		}
	}
	set(&n.Ingest, d.Ingest)
	set(&n.Parsed, d.Parsed)
	set(&n.DLQ, d.DLQ)
	set(&n.Parking, d.Parking)
	set(&n.Poison, d.Poison)
	set(&n.Audit, d.Audit)
	set(&n.Edits, d.Edits)
	set(&n.Tickets, d.Tickets)
	set(&n.Forensic, d.Forensic)
	set(&n.Ledger, d.Ledger)
	set(&n.Attempts, d.Attempts)
	set(&n.Leases, d.Leases)
	set(&n.AlertLimits, d.AlertLimits)
	return n
}

// Permissions are the subjects a user may publish and subscribe to. A deny
// wins over an allow.
type Permissions struct {
	PublishAllow, PublishDeny, SubscribeAllow, SubscribeDeny []string
}

// auditSubject is where audit events are appended (wire.AuditSubject; this
// package imports nothing of the module).
const auditSubject = "edi.audit.events"

// PartnerInboxPrefix is the reply prefix a partner must use
// (ClientAuth.InboxPrefix, `--inbox-prefix`, `nats --inbox-prefix`): a
// partner may not subscribe to _INBOX.>, where it would see the replies to
// everybody else's requests, payloads of other partners included.
func PartnerInboxPrefix(partner string) string { return "_INBOX_" + partner }

// ValidatePartnerID reports a partner ID that cannot be one subject token.
func ValidatePartnerID(id string) error {
	if id == "" || strings.ContainsAny(id, ".*> \t\r\n") || strings.HasPrefix(id, "$") {
		return fmt.Errorf("partner id %q: want one subject token (no dots, wildcards, spaces or leading $)", id)
	}
	return nil
}

// RolePermissions is the one definition of what each role may do.
func RolePermissions(role Role, partner string, names AuthNames) (Permissions, error) {
	n := names.withDefaults()
	api := "$JS.API."
	kv := func(b string) string { return "$KV." + b + ".>" }
	// Nobody may remove or rewrite the audit trail: not the hub, not an
	// operator (the stream also has deny_delete and deny_purge; whoever may
	// update it could turn them off).
	auditDeny := []string{
		api + "STREAM.DELETE." + n.Audit,
		api + "STREAM.PURGE." + n.Audit,
		api + "STREAM.UPDATE." + n.Audit,
		api + "STREAM.MSG.DELETE." + n.Audit,
		api + "STREAM.SNAPSHOT." + n.Audit,
		api + "STREAM.RESTORE.>",
	}
	switch role {
	case RoleHub:
		return Permissions{
			PublishAllow: []string{
				"edi.>", // outputs, copies, retries, audit appends, events, alerts, forensic summaries
				api + "INFO",
				api + "STREAM.CREATE.*",
				api + "STREAM.UPDATE.*",
				api + "STREAM.INFO.*",
				api + "STREAM.LIST",
				api + "STREAM.NAMES",
				api + "STREAM.MSG.GET.*",
				api + "STREAM.MSG.DELETE.*", // the API's drop
				// Buckets remove old revisions and chunks with a filtered purge.
				api + "STREAM.PURGE.KV_" + n.Attempts,
				api + "STREAM.PURGE.KV_" + n.Ledger,
				api + "STREAM.PURGE.KV_" + n.Tickets,
				api + "STREAM.PURGE.KV_" + n.Edits,
				api + "STREAM.PURGE.OBJ_" + n.Forensic,
				api + "CONSUMER.>",
				api + "DIRECT.GET.>",
				"$JS.ACK.>",
				"$JS.FC.>",
				kv(n.Edits), kv(n.Tickets), kv(n.Ledger), kv(n.Attempts), kv(n.Leases), kv(n.AlertLimits),
				"$O." + n.Forensic + ".>",
				"_INBOX.>",
			},
			PublishDeny:    auditDeny,
			SubscribeAllow: []string{"edi.>", "_INBOX.>", "$JS.EVENT.ADVISORY.>"},
		}, nil
	case RoleOperator:
		return Permissions{
			PublishAllow: []string{
				"edi.ingest.*",      // dlq replay
				"edi.*.parking-lot", // dlq park
				"edi.*.dlq.>",       // dlq edit (the edited copy)
				"edi.poison.>",      // dlq edit of a quarantined message
				"edi.forensic.>",    // poison reanalyse (summary)
				// The CLI appends its own audit events (who showed, replayed,
				// edited what). This also lets an operator append a forged
				// event: the chain proves nothing was removed or altered, not
				// that every event is true. The actor is whoever says so.
				auditSubject,
				api + "INFO",
				api + "STREAM.INFO.*",
				api + "STREAM.LIST",
				api + "STREAM.NAMES",
				api + "STREAM.MSG.GET.*",
				api + "STREAM.MSG.DELETE." + n.DLQ, // dlq drop
				api + "STREAM.MSG.DELETE." + n.Parking,
				api + "STREAM.MSG.DELETE." + n.Poison,
				api + "STREAM.CREATE.KV_" + n.Edits, // the first dlq edit creates the bucket
				api + "STREAM.UPDATE.KV_" + n.Edits,
				// poison reanalyse runs the worker's code, which opens the
				// forensic buckets with EnsureObjectStore (a CREATE, an UPDATE
				// when a setting differs) and replaces a report (a purge of its
				// old chunks). An operator could thus change those two
				// buckets' limits; they hold evidence, not the audit trail.
				api + "STREAM.CREATE.OBJ_" + n.Forensic,
				api + "STREAM.UPDATE.OBJ_" + n.Forensic,
				api + "STREAM.PURGE.OBJ_" + n.Forensic,
				api + "STREAM.CREATE.KV_" + n.Tickets,
				api + "STREAM.UPDATE.KV_" + n.Tickets,
				api + "CONSUMER.CREATE.>", // Scan: ephemeral consumers
				api + "CONSUMER.INFO.>",
				api + "CONSUMER.DELETE.>",
				api + "CONSUMER.MSG.NEXT.>",
				api + "DIRECT.GET.>",
				kv(n.Edits), kv(n.Tickets),
				"$O." + n.Forensic + ".>",
				"_INBOX.>",
			},
			PublishDeny:    append([]string{api + "STREAM.DELETE.>", "edi.parsed.>"}, auditDeny...),
			SubscribeAllow: []string{"_INBOX.>", "edi.events.>", "edi.alerts.>", "edi.forensic.>"},
		}, nil
	case RolePartner:
		if err := ValidatePartnerID(partner); err != nil {
			return Permissions{}, err
		}
		own := "edi.parsed." + partner + ".>"
		return Permissions{
			PublishAllow: []string{
				"edi.ingest." + partner,
				// A durable consumer on PARSED named after the partner,
				// filtered to its own subjects (nats.go sends the filter in
				// the subject; the server checks it against the config).
				api + "CONSUMER.CREATE." + n.Parsed + "." + partner + "." + own,
				api + "CONSUMER.INFO." + n.Parsed + "." + partner,
				api + "CONSUMER.MSG.NEXT." + n.Parsed + "." + partner,
				"$JS.ACK." + n.Parsed + "." + partner + ".>",
			},
			// its acknowledgements (CONTRL, 999, ...) by subscription
			SubscribeAllow: []string{own, "edi.outbound." + partner + ".>", PartnerInboxPrefix(partner) + ".>"},
		}, nil
	}
	return Permissions{}, fmt.Errorf("role %q: want hub, operator or partner", role)
}

// Server converts p for the embedded server.
func (p Permissions) Server() *server.Permissions {
	sp := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: p.PublishAllow, Deny: p.PublishDeny},
		Subscribe: &server.SubjectPermission{Allow: p.SubscribeAllow, Deny: p.SubscribeDeny},
	}
	return sp
}

// AuthUser is one user of the embedded server.
type AuthUser struct {
	Name string
	// Password, or NKey (a public user nkey, U...), not both.
	Password string
	NKey     string
	Role     Role
	Partner  string // RolePartner only
}

// serverUsers builds the embedded server's users from the role table.
func serverUsers(users []AuthUser, names AuthNames) ([]*server.User, []*server.NkeyUser, error) {
	var us []*server.User
	var nks []*server.NkeyUser
	for _, u := range users {
		p, err := RolePermissions(u.Role, u.Partner, names)
		if err != nil {
			return nil, nil, fmt.Errorf("nats user %q: %w", u.Name, err)
		}
		switch {
		case u.NKey != "" && u.Password != "":
			return nil, nil, fmt.Errorf("nats user %q: a password or an nkey, not both", u.Name)
		case u.NKey != "":
			nks = append(nks, &server.NkeyUser{Nkey: u.NKey, Permissions: p.Server()})
		case u.Password != "":
			us = append(us, &server.User{Username: u.Name, Password: u.Password, Permissions: p.Server()})
		default:
			return nil, nil, fmt.Errorf("nats user %q: no password and no nkey", u.Name)
		}
	}
	return us, nks, nil
}

// PermissionsConf renders the authorization block of nats-server's config
// for an external server or cluster: the hub's user, the operators' user
// and an example partner (ACME), passwords from the environment of
// nats-server. It is configs/nats-permissions.conf.
func PermissionsConf(names AuthNames) []byte {
	var b bytes.Buffer
	b.WriteString(confHeader)
	b.WriteString("\nauthorization {\n")
	block := func(comment, name string, role Role, partner string) {
		p, err := RolePermissions(role, partner, names)
		if err != nil {
			panic(err) // constant roles and partner: a programming error
		}
		for _, l := range strings.Split(strings.TrimSpace(comment), "\n") {
			fmt.Fprintf(&b, "  # %s\n", strings.TrimSpace(l))
		}
		fmt.Fprintf(&b, "  %s = {\n", name)
		section := func(key string, allow, deny []string) {
			fmt.Fprintf(&b, "    %s = {\n", key)
			list := func(k string, subjects []string) {
				if len(subjects) == 0 {
					return
				}
				fmt.Fprintf(&b, "      %s = [\n", k)
				for _, s := range subjects {
					fmt.Fprintf(&b, "        %q\n", s)
				}
				b.WriteString("      ]\n")
			}
			list("allow", allow)
			list("deny", deny)
			b.WriteString("    }\n")
		}
		section("publish", p.PublishAllow, p.PublishDeny)
		section("subscribe", p.SubscribeAllow, p.SubscribeDeny)
		b.WriteString("  }\n\n")
	}
	block(hubComment, "HUB", RoleHub, "")
	block(operatorComment, "OPERATOR", RoleOperator, "")
	block(partnerComment, "PARTNER_ACME", RolePartner, "ACME")
	b.WriteString(`  users = [
    { user: edihub,   password: $EDIHUB_NATS_PASSWORD,   permissions: $HUB }
    { user: operator, password: $OPERATOR_NATS_PASSWORD, permissions: $OPERATOR }
    { user: acme,     password: $ACME_NATS_PASSWORD,     permissions: $PARTNER_ACME }
  ]
}
`)
	return b.Bytes()
}

const confHeader = `# NATS authorization for edihub: the hub, the operators and one block per
# partner. GENERATED from jetstream/permissions.go (RolePermissions), the
# same table the embedded server's nats.auth users are built from; edit the
# Go table and run
#   go test ./jetstream -run TestPermissionsConf -update
# test/permissions_test.go runs this file in a real nats-server.
#
# Include it in the nats-server config (external server or cluster), e.g.
#   include ./nats-permissions.conf
# and give each user its own password (or an nkey instead of a password).
# Clients pass them with --user and --password-file or $EDIHUB_NATS_PASSWORD
# (or --creds, --nkey); never in a URL. Tokens of the HTTP API are configured
# in edihub.yaml (api.tokens); they never reach NATS.
#
# The AUDIT stream is created with deny_delete and deny_purge, so no client
# can remove an event through the message API. Whoever may UPDATE the stream
# could turn those flags off, and whoever may DELETE or PURGE it could wipe
# it; nobody below may do any of that. Only the system account (or an admin
# user you keep offline) can, and ` + "`edihub audit verify`" + ` names the first
# event that is missing or altered if it ever happens.
#
# Appending to AUDIT: the hub appends, and so does the operators' CLI (it
# records who showed, replayed, edited what). An operator can therefore
# append an event of its own making to edi.audit.events (not remove or
# alter one). Partners cannot publish to edi.audit.> at all.
`

const hubComment = `
The hub (edihub serve, its sandbox worker, the bridge, the HTTP API):
provisions and updates every stream except AUDIT (the hub sends the same
config on start; an update with other flags is what this forbids), runs
the pipeline, the forensic buckets (KV tickets, object store forensic),
the ledger and attempt buckets, and appends to AUDIT.`

const operatorComment = `
Operators (edihub dlq, poison, audit, send, drill; the nats CLI for
reading): read every stream, replay into INGEST, park, drop and edit in
DLQ/PARKING/POISON, reanalyse and ticket poison, append to AUDIT. No
stream may be deleted; none but the DLQ edits bucket created or updated;
AUDIT may not be purged, updated or have messages deleted.`

const partnerComment = `
A partner (here ACME; copy the block per partner and replace ACME):
publishes only to edi.ingest.ACME and reads only edi.parsed.ACME.>,
by subscription or through a consumer on PARSED named ACME. Its replies
come to _INBOX_ACME.> (nats --inbox-prefix _INBOX_ACME, edihub
--inbox-prefix _INBOX_ACME): _INBOX.> would show it everybody's replies.`

package jetstream

import (
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
	// Replays holds the replay batches and their outcomes (KV).
	Replays string
	// Buckets of a hub that shares a cluster with others: singleton
	// leases and shared alert limits (KV).
	Leases, AlertLimits string
	// AckRefs holds the partners' acknowledgement reference counters (KV).
	AckRefs string
	// Paused holds the partners the bulkhead paused (KV): the hub writes
	// them, operators list and resume them.
	Paused string
	// Payloads is the claim check's object store: outputs too large for
	// the server, referenced by x-payload-ref.
	Payloads string
	// Uploads is the stream of partners' upload chunks (edi.upload.>).
	Uploads string
}

// DefaultAuthNames are the default stream and bucket names.
func DefaultAuthNames() AuthNames {
	return AuthNames{
		Ingest: "INGEST", Parsed: "PARSED", DLQ: "DLQ", Parking: "PARKING", Poison: "POISON", Audit: "AUDIT",
		Edits: "dlq-edits", Tickets: "tickets", Forensic: "forensic", Ledger: "edihub-ledger", Attempts: "edihub-attempts",
		Leases: "edihub-leases", AlertLimits: "edihub-alert-limits", AckRefs: "edihub-ack-refs", Paused: "edihub-paused",
		Payloads: "edihub-payloads", Uploads: "UPLOAD", Replays: "dlq-replays",
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
	set(&n.Replays, d.Replays)
	set(&n.Tickets, d.Tickets)
	set(&n.Forensic, d.Forensic)
	set(&n.Ledger, d.Ledger)
	set(&n.Attempts, d.Attempts)
	set(&n.Leases, d.Leases)
	set(&n.AlertLimits, d.AlertLimits)
	set(&n.AckRefs, d.AckRefs)
	set(&n.Paused, d.Paused)
	set(&n.Payloads, d.Payloads)
	set(&n.Uploads, d.Uploads)
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

// literalToken refuses a partner that would not make literal, one-token
// subjects in the role table (no wildcard may ever be granted). The rule
// for a partner id is wire.ValidPartnerID, which callers ask (this package
// may not import wire); this is only the table's own guard.
func literalToken(partner string) error {
	if partner == "" || strings.Contains(partner, ".") || !server.IsValidLiteralSubject("edi.ingest."+partner) {
		return fmt.Errorf("partner id %q: not one literal subject token (see wire.ValidPartnerID)", partner)
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
				"edi.>", // outputs, copies, retries, audit appends, events, alerts, forensic summaries, edi.cluster.unstored (to the other hubs)
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
				api + "STREAM.PURGE.KV_" + n.Replays,
				api + "STREAM.PURGE.OBJ_" + n.Forensic,
				api + "STREAM.PURGE.OBJ_" + n.Payloads, // an output stored again replaces its object
				api + "STREAM.PURGE." + n.Uploads,      // an upload's chunks, once taken
				api + "CONSUMER.>",
				api + "DIRECT.GET.>",
				"$JS.ACK.>",
				"$JS.FC.>",
				kv(n.Edits), kv(n.Replays), kv(n.Tickets), kv(n.Ledger), kv(n.Attempts), kv(n.Leases), kv(n.AlertLimits), kv(n.AckRefs), kv(n.Paused),
				"$O." + n.Forensic + ".>",
				"$O." + n.Payloads + ".>",
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
				api + "STREAM.CREATE.KV_" + n.Replays, // the first replay records its batch
				api + "STREAM.UPDATE.KV_" + n.Replays,
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
				// flow control of the ordered consumer an object is read
				// with (edihub fetch, nats obj get of a payload stored
				// aside; the claim check's bucket is read, never written)
				"$JS.FC.>",
				kv(n.Edits), kv(n.Replays), kv(n.Tickets),
				kv(n.Paused), // partner paused, partner resume
				"$O." + n.Forensic + ".>",
				"_INBOX.>",
			},
			PublishDeny:    append([]string{api + "STREAM.DELETE.>", "edi.parsed.>"}, auditDeny...),
			SubscribeAllow: []string{"_INBOX.>", "edi.events.>", "edi.alerts.>", "edi.forensic.>"},
		}, nil
	case RolePartner:
		if err := literalToken(partner); err != nil {
			return Permissions{}, err
		}
		own := "edi.parsed." + partner + ".>"
		// No access to the claim check's bucket: an object's chunks are
		// on $O.<bucket>.C.<nuid>, a name no permission can tie to a
		// partner, so whoever may read one object may read them all. A
		// partner gets an output stored aside through the operator or
		// an application with the hub's consumer rights (README).
		return Permissions{
			// Its account reaches the hub's through the imports of
			// AccountsConf only: no JetStream API.
			// Its uploads (chunks of an interchange too large for the
			// server) go to its own upload subjects, the same way.
			PublishAllow: []string{"edi.ingest." + partner, "edi.upload." + partner + ".>"},
			// its acknowledgements (CONTRL, 999, ...) by subscription
			SubscribeAllow: []string{own, "edi.outbound." + partner + ".>", PartnerInboxPrefix(partner) + ".>"},
		}, nil
	}
	return Permissions{}, fmt.Errorf("role %q: want hub, operator or partner", role)
}

// AuthUser is one user of the embedded server.
type AuthUser struct {
	Name string
	// Password, or NKey (a public user nkey, U...), not both. PasswordEnv
	// instead of Password names an environment variable of nats-server
	// (a generated config for an external server).
	Password    string
	PasswordEnv string
	NKey        string
	Role        Role
	Partner     string // RolePartner only
}

// ExampleUsers are the users of configs/nats-permissions.conf: the hub,
// the operators and two example partners, passwords from nats-server's
// environment.
func ExampleUsers() []AuthUser {
	return []AuthUser{
		{Name: "edihub", Role: RoleHub, PasswordEnv: "EDIHUB_NATS_PASSWORD"},
		{Name: "operator", Role: RoleOperator, PasswordEnv: "OPERATOR_NATS_PASSWORD"},
		PartnerUser("ACME"),
		PartnerUser("BETA"),
	}
}

// PartnerUser is the generated user of a partner: its ID in lower case,
// its password in $<ID>_NATS_PASSWORD (ID upper-cased, every character
// that cannot be in a variable name as _).
func PartnerUser(id string) AuthUser {
	env := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, id)
	return AuthUser{Name: strings.ToLower(id), Role: RolePartner, Partner: id, PasswordEnv: env + "_NATS_PASSWORD"}
}

// PermissionsConf renders a whole accounts config (header and accounts
// block) for users: configs/nats-permissions.conf with ExampleUsers, and
// what `edihub nats-accounts` writes for the partners given.
func PermissionsConf(users []AuthUser, names AuthNames) ([]byte, error) {
	accounts, err := AccountsConf(users, names)
	if err != nil {
		return nil, err
	}
	return append([]byte(confHeader), accounts...), nil
}

const confHeader = `# NATS accounts for edihub. GENERATED from jetstream/accounts.go and
# jetstream/permissions.go (RolePermissions), the same code the embedded
# server's nats.auth users are built from. For your own partners run
#   edihub nats-accounts --partner ACME --partner BETA > nats-accounts.conf
# (this file is that output for ACME and BETA; go test ./jetstream -run
# TestPermissionsConf -update rewrites it). test/permissions_test.go runs
# the generated config in a real nats-server.
#
# Include it in the nats-server config (server with jetstream {}), e.g.
#   include ./nats-permissions.conf
# Passwords come from nats-server's environment ($EDIHUB_NATS_PASSWORD,
# $OPERATOR_NATS_PASSWORD, $<PARTNER>_NATS_PASSWORD); clients pass theirs
# with --user and --password-file or $EDIHUB_NATS_PASSWORD (or --creds,
# --nkey), never in a URL.
#
# Accounts: HUB holds every stream and bucket; its users are the hub and
# the operators. Each partner has an account of its own (PARTNER_<ID>),
# which reaches HUB only through these imports: its ingest subject (a
# service import: the server answers the PubAck through a reply subject of
# its own, so a reply subject the partner chose never reaches HUB), its
# upload subjects edi.upload.<ID>.> (chunks of an interchange over the
# server's limit, likewise a service import into stream UPLOAD; the
# partner reads nothing of them back), its
# results and acknowledgements (stream imports), and the pull consumer on
# PARSED named after it (info, next, ack; the hub's administrator creates
# it). Nothing a partner publishes, and no reply to it, can land in AUDIT,
# a bucket, another partner's ingest, POISON or a DLQ.
#
# Within HUB: the AUDIT stream has deny_delete and deny_purge, and nobody
# may DELETE, PURGE, UPDATE, SNAPSHOT or RESTORE it or delete a message;
# only the system account (or an admin user you keep offline) can. The hub
# appends to AUDIT, and so does the operators' CLI (who showed, replayed,
# edited what); operators read every stream, replay into INGEST, park, drop
# and edit dead letters, reanalyse and ticket poison; no stream may be
# deleted by them.

`

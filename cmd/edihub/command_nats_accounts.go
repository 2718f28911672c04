package main

import (
	"context"
	"fmt"
	"os"

	"github.com/edihub/edihub/escape"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/wire"
)

func init() {
	register(command{name: "nats-accounts", summary: "write nats-server's accounts config for an external server or cluster (hub account, one account per partner)", run: runNATSAccounts})
}

// runNATSAccounts prints (or writes to --out) the accounts config of
// jetstream.PermissionsConf: the hub's and the operators' users in the
// hub's account, one account and user per --partner. Passwords are
// references to nats-server's environment, never values.
func runNATSAccounts(_ context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "nats-accounts", "--partner ID [--partner ID ...] [--hub-user edihub] [--operator-user operator] [--out FILE]")
	var partners multiFlag
	fs.Var(&partners, "partner", "a partner ID (repeatable): account PARTNER_<ID>, user <id>, password $<ID>_NATS_PASSWORD")
	hubUser := fs.String("hub-user", "edihub", "the hub's user (password $EDIHUB_NATS_PASSWORD)")
	opUser := fs.String("operator-user", "operator", "the operators' user (password $OPERATOR_NATS_PASSWORD)")
	out := fs.String("out", "", "write the config to this file (mode 0644) instead of stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	users := []ejs.AuthUser{
		{Name: *hubUser, Role: ejs.RoleHub, PasswordEnv: "EDIHUB_NATS_PASSWORD"},
		{Name: *opUser, Role: ejs.RoleOperator, PasswordEnv: "OPERATOR_NATS_PASSWORD"},
	}
	seen := map[string]bool{}
	for _, p := range partners {
		if err := wire.ValidPartnerID(p); err != nil {
			return usageErr("--partner: %v", err)
		}
		if seen[p] {
			return usageErr("--partner %s given twice", escape.Line(p))
		}
		seen[p] = true
		users = append(users, ejs.PartnerUser(p))
	}
	conf, err := ejs.PermissionsConf(users, ejs.AuthNames{})
	if err != nil {
		return usageErr("%v", err)
	}
	if *out == "" {
		_, err := e.stdout.Write(conf)
		return err
	}
	if err := os.WriteFile(*out, conf, 0o644); err != nil {
		return failedErr("write %s: %v", escape.Line(*out), err)
	}
	fmt.Fprintf(e.stderr, "wrote %s: accounts HUB and %d partner account(s)\n", escape.Line(*out), len(partners))
	return nil
}

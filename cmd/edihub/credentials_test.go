package main

import (
	"testing"
)

// $EDIHUB_NATS_USER is a default: it does not collide with --creds.
func TestUserFromEnvYieldsToCreds(t *testing.T) {
	env := map[string]string{"EDIHUB_NATS_USER": "oncall", "EDIHUB_NATS_PASSWORD": "pw-from-env"}
	getenv := func(k string) string { return env[k] }
	a := authFlags{creds: "/etc/edihub/hub.creds"}
	if c := a.clientAuth(getenv); c.User != "" || c.Validate() != nil {
		t.Fatalf("creds and $EDIHUB_NATS_USER: %+v %v", c.User, c.Validate())
	}
	a = authFlags{}
	if c := a.clientAuth(getenv); c.User != "oncall" || c.Password != "pw-from-env" {
		t.Fatalf("user from env: %q", c.User)
	}
}

package test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/edihub/edihub/edifact/edifacttest"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// Passwords of the users of the generated accounts config; none of them
// may show up in a log line, an error or a command line.
const (
	hubPassword      = "hub-Secret-7731"
	operatorPassword = "op-Secret-8842"
	acmePassword     = "acme-Secret-9953"
	betaPassword     = "beta-Secret-1064"
)

// natsServerBinary finds nats-server on PATH or where `go install` puts
// it (.ci/run installs it there).
func natsServerBinary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "nats-server")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	t.Skip("nats-server is not installed (go install github.com/nats-io/nats-server/v2@v2.15.2; .ci/run does); skipping this test, which needs real nats-server processes")
	return ""
}

// startNATSServer runs a real nats-server process whose config includes
// the accounts config `edihub nats-accounts` generates for the partners
// ACME and BETA, with JetStream.
func startNATSServer(t *testing.T) string {
	t.Helper()
	return startAccountsServer(t, "max_payload: 33554432\n")
}

// startAccountsServer is startNATSServer with extra lines of server
// config ("": the stock max_payload, 1 MiB).
func startAccountsServer(t *testing.T, extra string) string {
	t.Helper()
	bin := natsServerBinary(t)
	dir := t.TempDir()
	gen := exec.Command(binary, "nats-accounts", "--partner", "ACME", "--partner", "BETA",
		"--out", filepath.Join(dir, "nats-permissions.conf"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("edihub nats-accounts: %v\n%s", err, out)
	}
	port := freePort(t)
	main := fmt.Sprintf("listen: 127.0.0.1:%d\n%sjetstream { store_dir: %q }\ninclude ./nats-permissions.conf\n",
		port, extra, filepath.Join(dir, "js"))
	cfg := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(cfg, []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", cfg)
	cmd.Env = append(os.Environ(), "EDIHUB_NATS_PASSWORD="+hubPassword,
		"OPERATOR_NATS_PASSWORD="+operatorPassword, "ACME_NATS_PASSWORD="+acmePassword, "BETA_NATS_PASSWORD="+betaPassword)
	log := &lockedWriter{mu: &sync.Mutex{}, w: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			log.mu.Lock()
			t.Logf("nats-server log:\n%s", log.w.String())
			log.mu.Unlock()
		}
	})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	jetstreamtest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		nc, err := nats.Connect(url, nats.UserInfo("edihub", hubPassword))
		if err != nil {
			return err
		}
		nc.Close()
		return nil
	})
	return url
}

// violations collects the permission errors the server sends a client.
type violations struct{ ch chan error }

func (v *violations) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	select {
	case v.ch <- err:
	default:
	}
}

// expectDenied runs act and waits for the server's permissions violation
// naming subject.
func (v *violations) expectDenied(t *testing.T, nc *nats.Conn, what, subject string, act func() error) {
	t.Helper()
	for len(v.ch) > 0 {
		<-v.ch
	}
	actErr := act()
	_ = nc.Flush()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case err := <-v.ch:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) {
				return
			}
			t.Logf("%s: other async error: %v", what, err)
		case <-deadline:
			t.Errorf("%s: not refused by the permissions (want a violation on %q; the call returned %v)", what, subject, actErr)
			return
		}
	}
}

// connectAs connects with the given credentials through ClientAuth, the
// way every edihub command does.
func connectAs(t *testing.T, url string, a ejs.ClientAuth) (*nats.Conn, js.JetStream, *violations) {
	t.Helper()
	v := &violations{ch: make(chan error, 64)}
	opts, err := a.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, j, err := ejs.Connect(url, "permissions-test-"+a.User, append(opts, nats.ErrorHandler(v.handler))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, j, v
}

// TestPermissionsConfInRealServer runs the generated accounts config in a
// real nats-server process: the real edihub binary runs the whole pipeline
// as the hub user (quarantine and forensics included), a partner publishes
// and reads its own results, the operator runs the runbook, and everything
// the roles must not do is refused by the server. It also checks that no
// password reaches serve's log, its command line or its sandbox worker's.
func TestPermissionsConfInRealServer(t *testing.T) {
	url := startNATSServer(t)
	ctx := context.Background()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "edihub.yaml")
	if err := os.WriteFile(cfgPath, []byte(fastConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))

	// The partner subscribes to its own results before anything is sent.
	acme, acmeJS, acmeV := connectAs(t, url, ejs.ClientAuth{User: "acme", Password: acmePassword, InboxPrefix: ejs.PartnerInboxPrefix("ACME")})
	parsed, err := acme.SubscribeSync("edi.parsed.ACME.>")
	if err != nil {
		t.Fatal(err)
	}

	// serve as the hub user: password in its environment only.
	serve, stop, logText := startServe(t, httpAddr, []string{"EDIHUB_NATS_PASSWORD=" + hubPassword},
		"serve", "--config", cfgPath, "--data", filepath.Join(dir, "data"), "--http", httpAddr,
		"--nats-url", url, "--user", "edihub", "--drill", "--log-level", "info")

	// No secret on the command lines of serve and of its sandbox worker.
	var workerPID int
	jetstreamtest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		m := regexp.MustCompile(`"pid":(\d+)[^\n]*sandbox worker started|sandbox worker started[^\n]*"pid":(\d+)`).FindStringSubmatch(logText())
		if m == nil {
			return errors.New("no 'sandbox worker started' line yet")
		}
		workerPID, _ = strconv.Atoi(m[1] + m[2])
		return nil
	})
	if _, err := os.Stat("/proc/self/cmdline"); err == nil {
		for name, pid := range map[string]int{"serve": serve.Process.Pid, "sandbox worker": workerPID} {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err != nil {
				t.Fatalf("%s cmdline: %v", name, err)
			}
			argv := strings.ReplaceAll(string(b), "\x00", " ")
			if strings.Contains(argv, hubPassword) {
				t.Errorf("%s has the password on its command line: %q", name, argv)
			}
			if name == "sandbox worker" && (!strings.Contains(argv, " sandbox ") || !strings.Contains(argv, "--user edihub")) {
				t.Errorf("pid %d is not the worker as expected: %q", pid, argv)
			}
		}
	}

	// The partner publishes to its own ingest subject: one good, one that
	// fails the schema (DLQ), one that panics the stage (POISON).
	for _, m := range []*nats.Msg{
		{Subject: "edi.ingest.ACME", Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "PERM0001"))},
		{Subject: "edi.ingest.ACME", Data: []byte(edifacttest.BadCount("SENDER:ZZZ", "RECEIVER:ZZZ", "PERM0002"))},
		{Subject: "edi.ingest.ACME", Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "PERM0003")), Header: nats.Header{"x-drill": []string{"panic"}}},
	} {
		if _, err := acmeJS.PublishMsg(ctx, m); err != nil {
			t.Fatalf("partner publishes to its own ingest subject: %v", err)
		}
	}
	waitParsed := func(ref string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			m, err := parsed.NextMsg(time.Until(deadline))
			if err != nil {
				break
			}
			if strings.Contains(string(m.Data), ref) {
				return
			}
		}
		t.Fatalf("the partner did not receive its result for %s on edi.parsed.ACME.>", ref)
	}
	waitParsed("PERM0001")

	// edihub send works as the partner (its replies on _INBOX_ACME).
	sendFile := filepath.Join(dir, "send.edi")
	if err := os.WriteFile(sendFile, []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "PERM0004")), 0o600); err != nil {
		t.Fatal(err)
	}
	send := exec.Command(binary, "send", "--partner", "ACME", "--server", url, "--user", "acme",
		"--inbox-prefix", ejs.PartnerInboxPrefix("ACME"), sendFile)
	send.Env = append(os.Environ(), "EDIHUB_NATS_PASSWORD="+acmePassword)
	sendOut, err := send.CombinedOutput()
	if err != nil {
		t.Fatalf("partner: edihub send: %v\n%s", err, sendOut)
	}
	// A partner may not read edi.events.>, but sees its own parsed output.
	if !strings.Contains(string(sendOut), "parsed: "+sendFile+" → edi.parsed.ACME.INVOIC") {
		t.Errorf("partner: send did not report the verdict:\n%s", sendOut)
	}
	waitParsed("PERM0004")

	hubNC, hubJS, hubV := connectAs(t, url, ejs.ClientAuth{User: "edihub", Password: hubPassword})

	// What the partner may not do.
	acmeV.expectDenied(t, acme, "partner publishes for another partner", "edi.ingest.BETA", func() error {
		return acme.Publish("edi.ingest.BETA", []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "FORGED01")))
	})
	acmeV.expectDenied(t, acme, "partner reads another partner's results", "edi.parsed.BETA.>", func() error {
		_, err := acme.SubscribeSync("edi.parsed.BETA.>")
		return err
	})
	acmeV.expectDenied(t, acme, "partner reads every result", "edi.parsed.>", func() error {
		_, err := acme.SubscribeSync("edi.parsed.>")
		return err
	})
	acmeV.expectDenied(t, acme, "partner listens to everybody's replies", "_INBOX.>", func() error {
		_, err := acme.SubscribeSync("_INBOX.>")
		return err
	})
	acmeV.expectDenied(t, acme, "partner creates a push consumer delivering into AUDIT", "$JS.API.CONSUMER.CREATE.PARSED.ACME", func() error {
		_, err := acme.Request("$JS.API.CONSUMER.CREATE.PARSED.ACME",
			[]byte(`{"stream_name":"PARSED","config":{"durable_name":"ACME","deliver_subject":"edi.audit.events"}}`), time.Second)
		return err
	})
	acmeV.expectDenied(t, acme, "partner reads INGEST", "$JS.API.STREAM.MSG.GET.INGEST", func() error {
		_, err := acme.Request("$JS.API.STREAM.MSG.GET.INGEST", []byte(`{"seq":1}`), time.Second)
		return err
	})
	acmeV.expectDenied(t, acme, "partner forges an audit event", "edi.audit.events", func() error {
		return acme.Publish("edi.audit.events", []byte(`{"action":"forged"}`))
	})

	// Reply-subject injection: a JetStream publish to its own ingest
	// subject, with a reply subject naming the hub's state. In one account
	// the server would store its PubAck there; the partner's account
	// reaches the hub's through a service import, whose reply is the
	// server's own.
	injected := []string{"edi.audit.events", "$KV.tickets.x", "$KV.edihub-ledger.x", "edi.ingest.BETA",
		"edi.poison.parse", "edi.parse.dlq.schema", "edi.parse.dlq.unknown"}
	for _, reply := range injected {
		if err := acme.PublishMsg(&nats.Msg{Subject: "edi.ingest.ACME", Reply: reply, Data: []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "INJ00001"))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := acmeJS.Publish(ctx, "edi.ingest.ACME", []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "INJ00002"))); err != nil {
		t.Fatalf("partner publish after the injections: %v", err)
	}
	waitParsed("INJ00002")
	assertNoPubAck(t, hubJS, "INGEST", "DLQ", "POISON", "PARKING", "AUDIT")
	for _, bucket := range []string{"tickets", "edihub-ledger"} {
		kv, err := hubJS.KeyValue(ctx, bucket)
		if err != nil {
			t.Fatal(err)
		}
		if e, err := kv.Get(ctx, "x"); !errors.Is(err, js.ErrKeyNotFound) {
			t.Errorf("a PubAck reached the %s bucket (key x): %v %v", bucket, e, err)
		}
	}

	// The hub quarantined the panicking message and the forensic worker
	// (its child, as the hub user) analysed it: ticket in KV, report in
	// the object store. The operator runs the runbook.
	op := func(args ...string) string {
		t.Helper()
		// The operator works on the hub's machine: --data is where the
		// audit key is, so its own events are signed and verify checks them.
		cmd := exec.Command(binary, append(args, "--server", url, "--user", "operator", "--data", filepath.Join(dir, "data"))...)
		cmd.Env = append(os.Environ(), "EDIHUB_NATS_PASSWORD="+operatorPassword)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("operator: edihub %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if strings.Contains(string(out), operatorPassword) {
			t.Errorf("edihub %s shows the password", strings.Join(args, " "))
		}
		return string(out)
	}
	var dlqID, poisonID string
	jetstreamtest.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		for stream, id := range map[string]*string{"DLQ": &dlqID, "POISON": &poisonID} {
			s, err := hubJS.Stream(ctx, stream)
			if err != nil {
				return err
			}
			info, err := s.Info(ctx)
			if err != nil {
				return err
			}
			if info.State.Msgs == 0 {
				return fmt.Errorf("%s is empty", stream)
			}
			*id = fmt.Sprintf("%s:%d", stream, info.State.FirstSeq)
		}
		return nil
	})
	jetstreamtest.CheckFor(t, 60*time.Second, 500*time.Millisecond, func() error {
		if out := op("poison", "ls"); !strings.Contains(out, "T-") {
			return fmt.Errorf("no ticket yet:\n%s", out)
		}
		return nil
	})
	op("poison", "show", poisonID)
	op("poison", "ticket", "ack", poisonID, "--note", "looking at it")
	op("poison", "reanalyse", poisonID) // runs the child here, stores report and ticket as the operator
	op("dlq", "ls")
	op("dlq", "show", dlqID)
	fixed := filepath.Join(dir, "fixed.edi")
	if err := os.WriteFile(fixed, []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "PERM0002")), 0o600); err != nil {
		t.Fatal(err)
	}
	op("dlq", "edit", dlqID, "--from-file", fixed)
	op("dlq", "replay", dlqID)
	waitParsed("PERM0002") // the edit went through the pipeline
	op("dlq", "drop", dlqID, "--reason", "edited and replayed")
	op("audit", "verify")

	// Nobody may delete, purge or rewrite AUDIT: not the operator, not the
	// hub; the operator may not forge results nor write other audit subjects.
	opNC, opJS, opV := connectAs(t, url, ejs.ClientAuth{User: "operator", Password: operatorPassword})
	auditBefore := auditMsgs(t, hubJS)
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 2*time.Second) }
	for _, who := range []struct {
		name string
		nc   *nats.Conn
		j    js.JetStream
		v    *violations
	}{{"operator", opNC, opJS, opV}, {"hub", hubNC, hubJS, hubV}} {
		who.v.expectDenied(t, who.nc, who.name+" deletes AUDIT", "$JS.API.STREAM.DELETE.AUDIT", func() error {
			c, cancel := short()
			defer cancel()
			return who.j.DeleteStream(c, "AUDIT")
		})
		who.v.expectDenied(t, who.nc, who.name+" purges AUDIT", "$JS.API.STREAM.PURGE.AUDIT", func() error {
			_, err := who.nc.Request("$JS.API.STREAM.PURGE.AUDIT", nil, time.Second)
			return err
		})
		who.v.expectDenied(t, who.nc, who.name+" updates AUDIT", "$JS.API.STREAM.UPDATE.AUDIT", func() error {
			c, cancel := short()
			defer cancel()
			_, err := who.j.UpdateStream(c, js.StreamConfig{Name: "AUDIT", Subjects: []string{"edi.audit.>"}})
			return err
		})
		who.v.expectDenied(t, who.nc, who.name+" deletes an audit event", "$JS.API.STREAM.MSG.DELETE.AUDIT", func() error {
			_, err := who.nc.Request("$JS.API.STREAM.MSG.DELETE.AUDIT", []byte(`{"seq":1}`), time.Second)
			return err
		})
	}
	opV.expectDenied(t, opNC, "operator deletes INGEST", "$JS.API.STREAM.DELETE.INGEST", func() error {
		c, cancel := short()
		defer cancel()
		return opJS.DeleteStream(c, "INGEST")
	})
	opV.expectDenied(t, opNC, "operator forges a result", "edi.parsed.ACME.INVOIC", func() error {
		return opNC.Publish("edi.parsed.ACME.INVOIC", []byte("{}"))
	})
	opV.expectDenied(t, opNC, "operator writes another audit subject", "edi.audit.forged", func() error {
		return opNC.Publish("edi.audit.forged", []byte("{}"))
	})
	// Only the hubs tell each other of outcomes the attempt store refused
	// (wire.UnstoredSubject): neither an operator nor a partner may
	// announce one (or a forged "applied") or listen; the hub may both.
	for _, who := range []struct {
		name string
		nc   *nats.Conn
		v    *violations
	}{{"operator", opNC, opV}, {"partner", acme, acmeV}} {
		who.v.expectDenied(t, who.nc, who.name+" announces an unstored outcome", wire.UnstoredSubject, func() error {
			return who.nc.Publish(wire.UnstoredSubject, []byte(`{"op":"applied"}`))
		})
		who.v.expectDenied(t, who.nc, who.name+" listens to the hubs' announcements", wire.UnstoredSubject, func() error {
			_, err := who.nc.SubscribeSync(wire.UnstoredSubject)
			return err
		})
	}
	peers, err := hubNC.SubscribeSync(wire.UnstoredSubject)
	if err != nil {
		t.Fatal(err)
	}
	if err := hubNC.Publish(wire.UnstoredSubject, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := peers.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("the hub user cannot announce to the other hubs: %v", err)
	}
	_ = peers.Unsubscribe()
	if after := auditMsgs(t, hubJS); after < auditBefore {
		t.Fatalf("AUDIT lost events: %d before, %d after", auditBefore, after)
	}
	op("audit", "verify")

	// An error names the URL without its password.
	cmd := exec.Command(binary, "dlq", "ls", "--server", strings.Replace(url, "nats://", "nats://operator:Wrong-Secret-1@", 1))
	out, _ := cmd.CombinedOutput()
	if strings.Contains(string(out), "Wrong-Secret-1") {
		t.Errorf("a refused connection shows the URL's password:\n%s", out)
	}

	stop()
	for _, pw := range []string{hubPassword, operatorPassword, acmePassword} {
		if strings.Contains(logText(), pw) {
			t.Errorf("serve's log contains a password")
		}
	}
}

// assertNoPubAck fails when a message of one of streams is a JetStream
// PubAck (an injected reply), after the hub's own processing of the
// messages published before had time to store one.
func assertNoPubAck(t *testing.T, j js.JetStream, streams ...string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(3 * time.Second) // absence: look a few times
	for {
		for _, name := range streams {
			s, err := j.Stream(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
				m, err := s.GetMsg(ctx, seq)
				if err != nil {
					continue // deleted or consumed
				}
				if bytes.Contains(m.Data, []byte(`"stream":"INGEST"`)) {
					t.Fatalf("a PubAck is stored in %s at %d on %s: %s", name, seq, m.Subject, m.Data)
				}
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func auditMsgs(t *testing.T, j js.JetStream) uint64 {
	t.Helper()
	s, err := j.Stream(context.Background(), "AUDIT")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !info.Config.DenyDelete || !info.Config.DenyPurge {
		t.Fatalf("AUDIT lost deny_delete/deny_purge: %+v", info.Config)
	}
	return info.State.Msgs
}

// TestEmbeddedServerAuth: serve's embedded server with nats.auth users
// gets the same role table. serve connects as the hub user, hands the
// password to its sandbox worker in the environment only, anonymous
// clients are refused, the partner and the operator work within their
// roles, and no secret is logged or on a command line.
func TestEmbeddedServerAuth(t *testing.T) {
	dir := t.TempDir()
	opFile := filepath.Join(dir, "oncall.password")
	if err := os.WriteFile(opFile, []byte(operatorPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "edihub.yaml")
	cfg := fastConfig + `
nats:
  auth:
    users:
      - {name: edihub, role: hub, password_env: HUB_PW}
      - {name: oncall, role: operator, password_file: ` + opFile + `}
      - {name: acme, role: partner, partner: ACME, password_env: ACME_PW}
`
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	_, stop, logText := startServe(t, httpAddr, []string{"HUB_PW=" + hubPassword, "ACME_PW=" + acmePassword},
		"serve", "--config", cfgPath, "--data", filepath.Join(dir, "data"), "--http", httpAddr,
		"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--log-level", "info")
	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatal("the embedded server accepted an anonymous client")
	}

	// The sandbox worker connected as the hub user (its durable consumer
	// exists) without the password on its command line.
	_, hubJS, _ := connectAs(t, url, ejs.ClientAuth{User: "edihub", Password: hubPassword})
	jetstreamtest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		_, err := hubJS.Consumer(context.Background(), "POISON", "forensics")
		return err
	})
	if _, err := os.Stat("/proc/self/cmdline"); err == nil {
		m := regexp.MustCompile(`"pid":(\d+)[^\n]*sandbox worker started|sandbox worker started[^\n]*"pid":(\d+)`).FindStringSubmatch(logText())
		if m == nil {
			t.Fatal("no 'sandbox worker started' line with its pid")
		}
		b, err := os.ReadFile("/proc/" + m[1] + m[2] + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if argv := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(argv, hubPassword) || !strings.Contains(argv, "--user edihub") {
			t.Fatalf("worker command line: %q", argv)
		}
	}

	acme, acmeJS, acmeV := connectAs(t, url, ejs.ClientAuth{User: "acme", Password: acmePassword, InboxPrefix: ejs.PartnerInboxPrefix("ACME")})
	parsed, err := acme.SubscribeSync("edi.parsed.ACME.>")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acmeJS.Publish(context.Background(), "edi.ingest.ACME", []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "EMB00001"))); err != nil {
		t.Fatalf("partner publishes: %v", err)
	}
	if m, err := parsed.NextMsg(30 * time.Second); err != nil || !strings.Contains(string(m.Data), "EMB00001") {
		t.Fatalf("partner result: %v", err)
	}
	acmeV.expectDenied(t, acme, "partner publishes for another partner", "edi.ingest.BETA", func() error {
		return acme.Publish("edi.ingest.BETA", []byte("x"))
	})

	// The operator, password from a file; the partner may not run it.
	cli := func(user string, env ...string) (string, error) {
		cmd := exec.Command(binary, "audit", "verify", "--server", url, "--user", user, "--password-file", opFile, "--data", filepath.Join(dir, "data"))
		if user == "acme" {
			cmd = exec.Command(binary, "audit", "verify", "--server", url, "--user", user)
		}
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := cli("oncall"); err != nil {
		t.Fatalf("operator audit verify: %v\n%s", err, out)
	}
	if out, err := cli("acme", "EDIHUB_NATS_PASSWORD="+acmePassword); err == nil {
		t.Fatalf("a partner verified the audit trail:\n%s", out)
	} else if strings.Contains(out, acmePassword) {
		t.Fatalf("the error shows the password:\n%s", out)
	}

	stop()
	for _, pw := range []string{hubPassword, operatorPassword, acmePassword} {
		if strings.Contains(logText(), pw) {
			t.Errorf("serve's log contains a password")
		}
	}
}

// startServe runs the real binary with args and extra environment until
// the test ends (or stop), waits until /readyz on httpAddr says ready, and
// logs its output if the test failed.
func startServe(t *testing.T, httpAddr string, env []string, args ...string) (cmd *exec.Cmd, stop func(), logText func() string) {
	t.Helper()
	serveLog := &lockedWriter{mu: &sync.Mutex{}, w: &bytes.Buffer{}}
	cmd = exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = serveLog, serveLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logText = func() string { serveLog.mu.Lock(); defer serveLog.mu.Unlock(); return serveLog.w.String() }
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("serve log:\n%s", logText())
		}
	})
	jetstreamtest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s", resp.Status)
		}
		return nil
	})
	return cmd, stop, logText
}

package test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hubclient"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Interchanges over a stock server's 1 MiB max_payload, uploaded by
// partners in their own accounts (the generated accounts config, a real
// nats-server, the real binary): `edihub send` uploads a 1.5 MiB one in
// chunks and it is parsed (its view stored aside); a partner cannot
// publish chunks for another, nor read the uploads or the payload bucket,
// nor write into it; BETA announcing ACME's upload gets a dead letter and
// ACME's upload is still ACME's; a forged x-payload-ref, bytes that are
// not the announced hash and an upload over parse.max_size are dead
// letters with the reason; an upload never announced is dropped after
// claim_check.upload_ttl.
func TestUploadsOnStockServerWithAccounts(t *testing.T) {
	url := startAccountsServer(t, "")
	ctx := context.Background()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "edihub.yaml")
	conf := "hub:\n  partitions: 2\n  claim_check:\n    upload_ttl: 15s\nparse:\n  max_size: 4194304\nsandbox:\n  enabled: false\n"
	if err := os.WriteFile(cfgPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startServe(t, httpAddr, []string{"EDIHUB_NATS_PASSWORD=" + hubPassword},
		"serve", "--config", cfgPath, "--data", filepath.Join(dir, "data"), "--http", httpAddr,
		"--nats-url", url, "--user", "edihub", "--log-level", "info")
	_, hubJS, _ := connectAs(t, url, ejs.ClientAuth{User: "edihub", Password: hubPassword})
	acme, acmeJS, acmeV := connectAs(t, url, ejs.ClientAuth{User: "acme", Password: acmePassword, InboxPrefix: ejs.PartnerInboxPrefix("ACME")})
	beta, betaJS, betaV := connectAs(t, url, ejs.ClientAuth{User: "beta", Password: betaPassword, InboxPrefix: ejs.PartnerInboxPrefix("BETA")})
	if mp := acme.MaxPayload(); mp != 1<<20 {
		t.Fatalf("max payload %d, want the stock 1 MiB", mp)
	}

	send := func(file string, data []byte, extra ...string) string {
		t.Helper()
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, append([]string{"send", "--partner", "ACME", "--server", url, "--user", "acme",
			"--inbox-prefix", ejs.PartnerInboxPrefix("ACME")}, append(extra, path)...)...)
		cmd.Env = append(os.Environ(), "EDIHUB_NATS_PASSWORD="+acmePassword)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("edihub send %s: %v\n%s", file, err, out)
		}
		return string(out)
	}

	// 1. send uploads, the hub parses; the view (over 1 MiB) is stored aside.
	big := edifacttest.TextInvoice("SENDER:14", "RECEIVER:14", "UPL00001", 1500<<10)
	out := send("big.edi", big)
	if !strings.Contains(out, "uploaded in 2 chunks") || !strings.Contains(out, "→ edi.parsed.ACME.INVOIC") {
		t.Fatalf("send of 1.5 MiB:\n%s", out)
	}
	parsed := waitStreamMsg(t, hubJS, "PARSED", func(m *js.RawStreamMsg) bool { return m.Header.Get("x-message-id") == "UPL00001" })
	view, err := hubclient.PayloadOf(ctx, hubJS, parsed.Header, parsed.Data)
	if err != nil || parsed.Header.Get("x-payload-ref") == "" || len(view) < 1<<20 || !bytes.Contains(view, []byte("LARGE PAYLOAD TEXT")) {
		t.Fatalf("parsed output (ref %q): %d bytes, %v", parsed.Header.Get("x-payload-ref"), len(view), err)
	}

	// 2. what a partner may not do with uploads and payloads
	other := hexSHA([]byte("acme's"))
	betaV.expectDenied(t, beta, "partner uploads for another partner", "edi.upload.ACME."+other, func() error {
		return beta.Publish("edi.upload.ACME."+other, []byte("chunk"))
	})
	acmeV.expectDenied(t, acme, "partner reads the uploads", "$JS.API.STREAM.MSG.GET.UPLOAD", func() error {
		_, err := acme.Request("$JS.API.STREAM.MSG.GET.UPLOAD", []byte(`{"seq":1}`), time.Second)
		return err
	})
	acmeV.expectDenied(t, acme, "partner reads the payload bucket", "$O.edihub-payloads.>", func() error {
		_, err := acme.SubscribeSync("$O.edihub-payloads.>")
		return err
	})
	acmeV.expectDenied(t, acme, "partner writes into the payload bucket", "$O.edihub-payloads.C.x", func() error {
		return acme.Publish("$O.edihub-payloads.C.x", []byte("overwrite"))
	})

	announce := func(j js.JetStream, partner string, data []byte, h nats.Header) {
		t.Helper()
		if h == nil {
			h = nats.Header{"x-upload-sha256": {hexSHA(data)}, "x-upload-size": {strconv.Itoa(len(data))}}
		}
		if _, err := j.PublishMsg(ctx, &nats.Msg{Subject: "edi.ingest." + partner, Header: h, Data: []byte(`{"upload":{}}`)}); err != nil {
			t.Fatalf("%s announces: %v", partner, err)
		}
	}
	chunk := func(j js.JetStream, partner, sha string, i int, data []byte) {
		t.Helper()
		m := &nats.Msg{Subject: "edi.upload." + partner + "." + sha, Header: nats.Header{"x-upload-chunk": {strconv.Itoa(i)}, "x-upload-sha256": {sha}}, Data: data}
		if _, err := j.PublishMsg(ctx, m); err != nil {
			t.Fatalf("%s uploads a chunk: %v", partner, err)
		}
	}
	deadLetter := func(partner, text string) {
		t.Helper()
		waitStreamMsg(t, hubJS, "DLQ", func(m *js.RawStreamMsg) bool {
			return m.Subject == "edi.parse.dlq.unknown" && m.Header.Get("x-partner-id") == partner && strings.Contains(m.Header.Get("x-error-msg"), text)
		})
	}

	// 3. BETA announces ACME's upload: nothing of ACME's is read for BETA.
	second := edifacttest.TextInvoice("SENDER:14", "RECEIVER:14", "UPL00002", 1200<<10)
	chunk(acmeJS, "ACME", hexSHA(second), 0, second[:800<<10])
	chunk(acmeJS, "ACME", hexSHA(second), 1, second[800<<10:])
	announce(betaJS, "BETA", second, nil)
	deadLetter("BETA", "no chunk of it on edi.upload.BETA")
	announce(acmeJS, "ACME", second, nil) // ACME's own upload is intact
	waitStreamMsg(t, hubJS, "PARSED", func(m *js.RawStreamMsg) bool { return m.Header.Get("x-message-id") == "UPL00002" })

	// 4. a forged reference to the hub's own object
	announce(acmeJS, "ACME", nil, nats.Header{"x-payload-ref": {parsed.Header.Get("x-payload-ref")},
		"x-payload-size": {parsed.Header.Get("x-payload-size")}, "x-payload-sha256": {parsed.Header.Get("x-payload-sha256")}})
	deadLetter("ACME", "x-payload-ref, the hub's own header")

	// 5. bytes that are not the announced ones
	claimed := hexSHA([]byte("what ACME claims"))
	chunk(acmeJS, "ACME", claimed, 0, second[:900<<10])
	announce(acmeJS, "ACME", nil, nats.Header{"x-upload-sha256": {claimed}, "x-upload-size": {strconv.Itoa(900 << 10)}})
	deadLetter("ACME", "hash to "+hexSHA(second[:900<<10]))

	// 6. over parse.max_size (4 MiB): uploaded, refused before reading
	huge := edifacttest.TextInvoice("SENDER:14", "RECEIVER:14", "UPL00003", 5<<20)
	if out := send("huge.edi", huge, "--outcome", "0"); !strings.Contains(out, "uploaded in 6 chunks") {
		t.Fatalf("send of 5 MiB:\n%s", out)
	}
	deadLetter("ACME", fmt.Sprintf("upload of %d bytes is over parse.max_size (4194304 bytes)", len(huge)))

	// 7. an upload never announced is gone after upload_ttl
	chunk(acmeJS, "ACME", hexSHA([]byte("never announced")), 0, []byte("half"))
	jetstreamtest.CheckFor(t, 90*time.Second, 500*time.Millisecond, func() error {
		if n := jetstreamtest.CountMsgs(t, hubJS, "UPLOAD"); n != 0 {
			return fmt.Errorf("UPLOAD holds %d chunks", n)
		}
		return nil
	})
	for _, s := range []string{"RETRY", "POISON"} {
		if n := jetstreamtest.CountMsgs(t, hubJS, s); n != 0 {
			t.Errorf("%s holds %d messages", s, n)
		}
	}
}

// waitStreamMsg waits for a message of stream that ok accepts.
func waitStreamMsg(t *testing.T, j js.JetStream, stream string, ok func(*js.RawStreamMsg) bool) *js.RawStreamMsg {
	t.Helper()
	var found *js.RawStreamMsg
	jetstreamtest.CheckFor(t, 60*time.Second, 200*time.Millisecond, func() error {
		for _, m := range jetstreamtest.StreamMsgs(t, j, stream) {
			if ok(m) {
				found = m
				return nil
			}
		}
		return errors.New("not in " + stream + " yet")
	})
	return found
}

// A dead letter whose payload is an upload, through the runbook of the
// real binary on a stock server with the generated accounts: `dlq show`
// (as the operator) shows the uploaded bytes, fetched and checked; the
// dry run decides on them; an edit through the API (the hub's rights) of
// more than the server takes is stored as an upload, and the replay sends
// the reference, which the hub takes and parses.
func TestUploadedDeadLetterThroughRunbook(t *testing.T) {
	url := startAccountsServer(t, "")
	ctx := context.Background()
	dir := t.TempDir()
	const token = "upload-operator-token-0123456789"
	cfgPath := filepath.Join(dir, "edihub.yaml")
	conf := "hub:\n  partitions: 2\nsandbox:\n  enabled: false\napi:\n  tokens:\n    - {name: oncall, token: " + token + ", role: operator}\n"
	if err := os.WriteFile(cfgPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	data := filepath.Join(dir, "data")
	startServe(t, httpAddr, []string{"EDIHUB_NATS_PASSWORD=" + hubPassword},
		"serve", "--config", cfgPath, "--data", data, "--http", httpAddr, "--nats-url", url, "--user", "edihub", "--log-level", "info")
	_, hubJS, _ := connectAs(t, url, ejs.ClientAuth{User: "edihub", Password: hubPassword})
	run := func(env string, args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("edihub %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	good := edifacttest.TextInvoice("SENDER:14", "RECEIVER:14", "FIX00001", 1500<<10)
	broken := bytes.Replace(good, []byte("'UNT+"), []byte("'UNT+9"), 1) // a wrong segment count
	file := filepath.Join(dir, "broken.edi")
	if err := os.WriteFile(file, broken, 0o600); err != nil {
		t.Fatal(err)
	}
	run("EDIHUB_NATS_PASSWORD="+acmePassword, "send", "--partner", "ACME", "--server", url, "--user", "acme",
		"--inbox-prefix", ejs.PartnerInboxPrefix("ACME"), "--outcome", "0", file)
	dl := waitStreamMsg(t, hubJS, "DLQ", func(m *js.RawStreamMsg) bool { return m.Subject == "edi.parse.dlq.schema" })
	id := "DLQ:" + strconv.FormatUint(dl.Sequence, 10)

	op := func(args ...string) string {
		return run("EDIHUB_NATS_PASSWORD="+operatorPassword, append(args, "--server", url, "--user", "operator", "--data", data)...)
	}
	show := op("dlq", "show", id)
	if !strings.Contains(show, "payload stored aside as edihub-payloads/upload/ACME/"+hexSHA(broken)) || !strings.Contains(show, "UNB+UNOA:3+SENDER:14") ||
		!strings.Contains(show, fmt.Sprintf("%d bytes  sha256 %s", len(broken), hexSHA(broken))) {
		t.Fatalf("dlq show:\n%.2000s", show)
	}
	// a dry run that would fail exits 1: it says so on the real bytes
	dryCmd := exec.Command(binary, "dlq", "replay", id, "--dry-run", "--server", url, "--user", "operator", "--data", data)
	dryCmd.Env = append(os.Environ(), "EDIHUB_NATS_PASSWORD="+operatorPassword)
	if dry, _ := dryCmd.CombinedOutput(); !strings.Contains(string(dry), "would be dead-lettered again (schema)") || !strings.Contains(string(dry), "UNT count 9") {
		t.Fatalf("dry run:\n%s", dry)
	}

	api := func(method, path, body string) string {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+httpAddr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %s %s", method, path, resp.Status, b)
		}
		return string(b)
	}
	if got := api("GET", "/api/v1/dlq/"+id, ""); !strings.Contains(got, `"referenced":{"ref":"edihub-payloads/upload/ACME/`+hexSHA(broken)) {
		t.Fatalf("API show: %.300s", got)
	}
	body, _ := json.Marshal(map[string]any{"payload": good, "reason": "segment count fixed"})
	if got := api("POST", "/api/v1/dlq/"+id+"/edit", string(body)); !strings.Contains(got, hexSHA(good)) {
		t.Fatalf("API edit: %s", got)
	}
	op("dlq", "replay", id)
	parsed := waitStreamMsg(t, hubJS, "PARSED", func(m *js.RawStreamMsg) bool { return m.Header.Get("x-message-id") == "FIX00001" })
	if view, err := hubclient.PayloadOf(ctx, hubJS, parsed.Header, parsed.Data); err != nil || !bytes.Contains(view, []byte("LARGE PAYLOAD TEXT")) {
		t.Fatalf("parsed after the replay: %d bytes, %v", len(view), err)
	}
	in := waitStreamMsg(t, hubJS, "INGEST", func(m *js.RawStreamMsg) bool { return m.Header.Get("x-replayed-from") != "" })
	if len(in.Data) > 256 || in.Header.Get("x-upload-sha256") != hexSHA(good) {
		t.Fatalf("the replayed copy: %d bytes, headers %v", len(in.Data), in.Header)
	}
}

package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/hubclient"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// The real binary on a real nats-server with its default configuration
// (max_payload 1 MiB) and the claim check on (the default): a 480 KB
// interchange whose view (2.6 MB) cannot be a message ends in PARSED as
// a reference; its payload, fetched by hubclient and by `edihub fetch`,
// is byte for byte what the embedded server (32 MiB) stores inline;
// nothing is dead-lettered or retried, and the partner's next
// interchange is parsed.
func TestStockServerClaimCheck(t *testing.T) {
	n := startStockNATS(t)
	h := startClusterHubConfig(t, []*natsNode{n}, "hub:\n  partitions: 1\n  edifact:\n    max_size: 1000000\nsandbox:\n  enabled: false\n")
	_, j := jetstreamtest.Connect(t, n.url)
	big := tinyInvoic("BIG1", 480<<10)
	jetstreamtest.PublishIngest(t, j, "ACME", string(big), nil)
	jetstreamtest.PublishIngest(t, j, "ACME", string(tinyInvoic("NEXT1", 2000)), nil)
	jetstreamtest.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if p := jetstreamtest.CountMsgs(t, j, "PARSED"); p != 2 {
			return fmt.Errorf("PARSED %d", p)
		}
		return nil
	})
	parsed := jetstreamtest.StreamMsgs(t, j, "PARSED")
	ref := parsed[0]
	if ref.Header.Get("x-message-id") != "BIG1" || ref.Header.Get("x-payload-ref") != "edihub-payloads/INGEST:1:out:0" ||
		len(ref.Data) > 1024 || !strings.Contains(string(ref.Data), `"claim_check"`) {
		t.Fatalf("first output %s: headers %v, %d bytes: %.200s", ref.Subject, ref.Header, len(ref.Data), ref.Data)
	}
	if got := parsed[1].Header.Get("x-message-id"); got != "NEXT1" || parsed[1].Header.Get("x-payload-ref") != "" {
		t.Fatalf("second output %q (ref %q), want NEXT1 inline", got, parsed[1].Header.Get("x-payload-ref"))
	}
	for _, s := range []string{"DLQ", "RETRY", "POISON"} {
		if c := jetstreamtest.CountMsgs(t, j, s); c != 0 {
			t.Fatalf("%s holds %d messages", s, c)
		}
	}
	if f := metricValue(t, h.httpAddr, "edihub_pipeline_publish_failures_total"); f != 0 {
		t.Fatalf("%v publish failures", f)
	}
	if a := metricValue(t, h.httpAddr, "edihub_pipeline_payloads_stored_aside_total"); a != 1 {
		t.Fatalf("%v payloads stored aside, want 1", a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	view, err := hubclient.PayloadOf(ctx, j, ref.Header, ref.Data)
	if err != nil || len(view) <= 1<<20 {
		t.Fatalf("hubclient: %d bytes, %v", len(view), err)
	}
	out := filepath.Join(t.TempDir(), "view.json")
	if _, stderr, code := runCLI(t, 60*time.Second, "fetch", "--server", n.url, "PARSED:1", "--out", out); code != 0 ||
		!strings.Contains(stderr, "SHA-256 checked") {
		t.Fatalf("edihub fetch: exit %d: %s", code, stderr)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, view) {
		t.Fatalf("edihub fetch wrote %d bytes (%v), hubclient gave %d", len(got), err, len(view))
	}

	// the same interchange through the embedded server: inline, the same bytes
	e := startHubConfig(t, "")
	_, ej := jetstreamtest.Connect(t, e.url)
	jetstreamtest.PublishIngest(t, ej, "ACME", string(big), nil)
	jetstreamtest.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if p := jetstreamtest.CountMsgs(t, ej, "PARSED"); p != 1 {
			return fmt.Errorf("embedded PARSED %d", p)
		}
		return nil
	})
	inline := jetstreamtest.StreamMsgs(t, ej, "PARSED")[0]
	if inline.Header.Get("x-payload-ref") != "" || !bytes.Equal(inline.Data, view) {
		t.Fatalf("embedded output: %d bytes inline (ref %q), the stored-aside one %d", len(inline.Data), inline.Header.Get("x-payload-ref"), len(view))
	}
}

// The generated permissions in a real nats-server: the hub user creates
// the claim-check bucket and stores a payload aside (replacing it on a
// second store); the operator reads it back through hubclient (as
// `edihub fetch` and `nats obj get` do) but may not write or purge it; a
// partner cannot reach the bucket at all (chunk subjects cannot be tied to
// a partner).
func TestClaimCheckPermissions(t *testing.T) {
	url := startNATSServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, hubJS, _ := connectAs(t, url, ejs.ClientAuth{User: "edihub", Password: hubPassword})
	s, err := claimcheck.Open(ctx, hubJS, claimcheck.Config{})
	if err != nil {
		t.Fatalf("hub opens the bucket: %v", err)
	}
	payload := bytes.Repeat([]byte("LIN+1'"), 300000) // 1.8 MB, 14 chunks
	var m *nats.Msg
	for range 2 {
		if m, err = s.Aside(ctx, &nats.Msg{Subject: "edi.parsed.ACME.INVOIC", Data: payload}, "INGEST:1:out:0"); err != nil {
			t.Fatalf("hub stores aside: %v", err)
		}
	}
	opNC, opJS, opV := connectAs(t, url, ejs.ClientAuth{User: "operator", Password: operatorPassword})
	got, err := hubclient.PayloadOf(ctx, opJS, m.Header, m.Data)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("operator reads the payload: %d bytes, %v", len(got), err)
	}
	// the README's line, as the operator
	if cli, err := exec.LookPath("nats"); err == nil {
		f := filepath.Join(t.TempDir(), "view.json")
		cmd := exec.Command(cli, "--server", url, "--user", "operator", "obj", "get", "edihub-payloads", "INGEST:1:out:0", "-O", f, "--no-progress", "-f")
		cmd.Env = append(os.Environ(), "NATS_CONTEXT=", "HOME="+t.TempDir(), "NATS_PASSWORD="+operatorPassword)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("operator: nats obj get: %v\n%s", err, out)
		}
		if got, err := os.ReadFile(f); err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("nats obj get wrote %d bytes (%v), want %d", len(got), err, len(payload))
		}
	} else {
		t.Log("the nats CLI is not installed: nats obj get not tried")
	}
	opV.expectDenied(t, opNC, "operator writes a chunk", "$O.edihub-payloads.C.forged", func() error {
		return opNC.Publish("$O.edihub-payloads.C.forged", []byte("x"))
	})
	opV.expectDenied(t, opNC, "operator purges the bucket", "$JS.API.STREAM.PURGE.OBJ_edihub-payloads", func() error {
		return opNC.Publish("$JS.API.STREAM.PURGE.OBJ_edihub-payloads", nil)
	})
	_, acmeJS, _ := connectAs(t, url, ejs.ClientAuth{User: "acme", Password: acmePassword, InboxPrefix: ejs.PartnerInboxPrefix("ACME")})
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	defer pcancel()
	if _, err := hubclient.PayloadOf(pctx, acmeJS, m.Header, m.Data); err == nil {
		t.Fatal("a partner read a payload stored aside")
	}
}

// A legal 9.9 MiB interchange of tiny segments on a real nats-server with
// its default configuration (max_payload 1 MiB) and serve's default
// parse.max_size (10 MiB): `edihub send` uploads it in chunks, the hub
// takes the upload, and its 55 MB view, which no server would take as a
// message, ends in PARSED as a reference (it was retried for ever before
// the claim check); the partner's next interchange is parsed.
func TestClaimCheckTenMiB(t *testing.T) {
	if testing.Short() {
		t.Skip("parses a 9.9 MiB interchange through a stock nats-server process")
	}
	n := startStockNATS(t)
	h := startClusterHubConfig(t, []*natsNode{n}, "hub:\n  partitions: 1\nsandbox:\n  enabled: false\n")
	_, j := jetstreamtest.Connect(t, n.url)
	big := tinyInvoic("HUGE1", 9900<<10)
	file := filepath.Join(t.TempDir(), "huge.edi")
	if err := os.WriteFile(file, big, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, 120*time.Second, "send", "--partner", "ACME", "--server", n.url, "--outcome", "0", file)
	if code != 0 || !strings.Contains(out, "uploaded in 10 chunks") {
		t.Fatalf("send of 9.9 MiB to a stock server: exit %d\n%s%s", code, out, errOut)
	}
	jetstreamtest.PublishIngest(t, j, "ACME", string(tinyInvoic("NEXT2", 2000)), nil)
	jetstreamtest.CheckFor(t, 120*time.Second, 200*time.Millisecond, func() error {
		if p := jetstreamtest.CountMsgs(t, j, "PARSED"); p != 2 {
			return fmt.Errorf("PARSED %d", p)
		}
		return nil
	})
	parsed := jetstreamtest.StreamMsgs(t, j, "PARSED")
	if parsed[0].Header.Get("x-message-id") != "HUGE1" || parsed[0].Header.Get("x-payload-ref") == "" || parsed[1].Header.Get("x-message-id") != "NEXT2" {
		t.Fatalf("PARSED: %v / %v", parsed[0].Header, parsed[1].Header)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	view, err := hubclient.PayloadOf(ctx, j, parsed[0].Header, parsed[0].Data)
	if err != nil || len(view) <= 32<<20 || !json.Valid(view) {
		t.Fatalf("payload: %d bytes, %v", len(view), err)
	}
	for _, s := range []string{"DLQ", "RETRY", "POISON"} {
		if c := jetstreamtest.CountMsgs(t, j, s); c != 0 {
			t.Fatalf("%s holds %d messages", s, c)
		}
	}
	if f := metricValue(t, h.httpAddr, "edihub_pipeline_publish_failures_total"); f != 0 {
		t.Fatalf("%v publish failures", f)
	}
}

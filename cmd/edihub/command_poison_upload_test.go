package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/edifact/edifacttest"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// `poison show` of a quarantined upload (the hub's copy, its x-hub-mac
// verified, is the announcement) shows the report of the real child's
// analysis of the upload's bytes, those bytes as the payload, and where
// they were read.
func TestPoisonShowOfAnUpload(t *testing.T) {
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{DataDir: t.TempDir()})
	url := srv.ClientURL()
	nc, j, err := ejs.Connect(url, "poison-upload-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, subj := range map[string]string{"POISON": "edi.poison.>", "AUDIT": "edi.audit.>"} {
		if _, err := j.CreateStream(ctx, js.StreamConfig{Name: name, Subjects: []string{subj}, Storage: js.FileStorage}); err != nil {
			t.Fatal(err)
		}
	}
	payloads, err := claimcheck.Open(ctx, j, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	uploads, err := claimcheck.OpenUploads(ctx, j, payloads, claimcheck.UploadsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(strings.Replace(edifacttest.InvoiceFrom("S:ZZZ", "R:ZZZ", "UPSHOW1"), "UNT+3+1", "UNT+9+1", 1))
	sum := audit.PayloadHash(data)
	m := &nats.Msg{Subject: wire.UploadSubject("ACME", sum), Data: data, Header: nats.Header{wire.HdrUploadChunk: {"0"}, wire.HdrUploadSHA256: {sum}}}
	if _, err := j.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	hdr := nats.Header{wire.HdrUploadSHA256: {sum}, wire.HdrUploadSize: {strconv.Itoa(len(data))}}
	if _, err := uploads.Resolve(ctx, "ACME", hdr, 1<<20); err != nil {
		t.Fatal(err)
	}
	keys, err := audit.NewKeyring([]byte(strings.Repeat("h", 32)))
	if err != nil {
		t.Fatal(err)
	}
	defer runForensicsKeyed(t, ctx, cancel, nc, keys)()
	publishPoisonSigned(t, ctx, j, keys, "9", "killed while parsing", wire.UploadStub(wire.Upload{SHA256: sum, Size: int64(len(data))}), hdr)

	var out string
	jetstreamtest.Eventually(t, 30*time.Second, func() bool {
		out, _, _ = runCmd(t, "poison", "ls", "--server", url)
		return strings.Contains(out, "reproduced-error")
	})
	out, errOut, code := runCmd(t, "poison", "show", "POISON:1", "--server", url)
	if code != 0 {
		t.Fatalf("show: %d %s", code, errOut)
	}
	for _, want := range []string{"outcome   reproduced-error", "UNT count 9", "copy      the hub's (x-hub-mac v2 verified",
		"upload    the copy announces upload " + sum + " (" + strconv.Itoa(len(data)) + " bytes): the payload is its bytes, read from edihub-payloads/upload/ACME/" + sum,
		"payload: " + strconv.Itoa(len(data)) + " bytes, sha256 " + sum, "UNH+1+INVOIC"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = runCmd(t, "poison", "show", "POISON:1", "--json", "--server", url)
	var shown poisonShow
	if err := json.Unmarshal([]byte(out), &shown); err != nil || string(shown.Payload) != string(data) || shown.Report.Upload == nil {
		t.Fatalf("show --json: %v, payload %q, upload %+v", err, shown.Payload, shown.Report.Upload)
	}
}

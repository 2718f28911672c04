package app

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/wire"
)

// An announcement whose chunks expired (upload_ttl 1 s on a real server)
// before the hub took them ends as a dead letter at once, cause unknown,
// its x-error-msg saying so; nothing retries or is quarantined; `dlq
// show` says why the payload is not there, and a replay is refused with
// that reason.
func TestExpiredUploadIsDeadLetterWithReason(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	payloads, err := claimcheck.Open(ctx, j, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	uploads, err := claimcheck.OpenUploads(ctx, j, payloads, claimcheck.UploadsConfig{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st := parse.Stage(parse.Config{}, nil)
	st.Handle = uploadMiddleware(uploads, func(string) int64 { return 1 << 20 }, zerolog.Nop())(st.Handle)
	cfg := hubtest.FastConfig()
	env := hubtest.Run(t, &hubtest.Options{URL: srv.URL, Config: &cfg, Stages: []hub.Stage{st}})

	data := []byte(edifacttest.InvoiceFrom("SENDER:ZZZ", "RECEIVER:ZZZ", "EXPIRED1"))
	up := wire.Upload{SHA256: audit.PayloadHash(data), Size: int64(len(data))}
	m := &nats.Msg{Subject: wire.UploadSubject("ACME", up.SHA256), Data: data, Header: nats.Header{wire.HdrUploadChunk: {"0"}, wire.HdrUploadSHA256: {up.SHA256}}}
	if _, err := j.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		if n := jetstreamtest.CountMsgs(t, j, wire.DefaultUploadStream); n != 0 {
			return errors.New(strconv.Itoa(n) + " chunks still stored")
		}
		return nil
	})
	hdr := nats.Header{wire.HdrUploadSHA256: {up.SHA256}, wire.HdrUploadSize: {strconv.FormatInt(up.Size, 10)}}
	jetstreamtest.PublishIngest(t, env.JS, "ACME", string(wire.UploadStub(up)), hdr)

	var id string
	jetstreamtest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		for _, dl := range jetstreamtest.StreamMsgs(t, env.JS, "DLQ") {
			if msg := dl.Header.Get(wire.HdrErrorMsg); dl.Subject == "edi.parse.dlq.unknown" &&
				strings.Contains(msg, "the upload's bytes are gone") && strings.Contains(msg, "expired after hub.claim_check.upload_ttl") {
				id = "DLQ:" + strconv.FormatUint(dl.Sequence, 10)
				return nil
			}
		}
		return errors.New("no dead letter naming the expired upload yet")
	})
	for _, s := range []string{"RETRY", "POISON"} {
		if n := jetstreamtest.CountMsgs(t, env.JS, s); n != 0 {
			t.Errorf("%s holds %d messages", s, n)
		}
	}
	o, err := ops.NewOps(ops.OpsOptions{JS: env.JS, Auditor: audit.New(env.JS, "AUDIT"), Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := o.Show(ctx, id, ops.ShowOptions{})
	if err != nil || res.Referenced == nil || !strings.Contains(res.Referenced.Error, "the hub never took them (their chunks expired after hub.claim_check.upload_ttl") {
		t.Fatalf("dlq show: %+v, %v", res.Referenced, err)
	}
	rep, err := o.Replay(ctx, ops.ReplayRequest{IDs: []string{id}})
	if err != nil || rep.Failed != 1 || !strings.Contains(rep.Items[0].Error, "expired after hub.claim_check.upload_ttl") {
		t.Fatalf("dlq replay: %+v %v", rep, err)
	}
}

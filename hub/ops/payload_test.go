package ops

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A dead letter whose payload is an upload (the copy of its announcement,
// the bytes in the payload bucket, on a server with the stock 1 MiB max
// payload): show and the editor's payload give the bytes, checked; the
// dry run decides on them; a replay sends the reference, not the bytes;
// an edit that fits goes inline, one that does not is stored as an upload
// and its copy is the reference; a replay to another partner names an
// upload of that partner; a reference whose bytes are gone is shown as it
// is, with the reason, and not replayed.
func TestReferencedDeadLetters(t *testing.T) {
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{MaxPayload: 1 << 20})
	cfg := hubtest.FastConfig()
	env := hubtest.Run(t, &hubtest.Options{URL: srv.URL, Config: &cfg})
	ctx := context.Background()
	payloads, err := claimcheck.Open(ctx, env.JS, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := env.JS.ObjectStore(ctx, payloads.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewOps(OpsOptions{JS: env.JS, Auditor: audit.New(env.JS, "AUDIT"), Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}

	big := edifacttest.TextInvoice("SENDER1:14", "RECEIVER1:14", "BIGREF01", 1500<<10)
	sum := audit.PayloadHash(big)
	if _, err := obj.PutBytes(ctx, wire.UploadObject("ACME", sum), big); err != nil {
		t.Fatal(err)
	}
	// The hub under test has no upload resolution (app adds it): the
	// announcement is dead-lettered as what its body is, keeping its
	// upload headers, as a refused upload's copy does.
	up := wire.Upload{SHA256: sum, Size: int64(len(big))}
	hdr := nats.Header{wire.HdrUploadSHA256: {sum}, wire.HdrUploadSize: {strconv.Itoa(len(big))}}
	jetstreamtest.PublishIngest(t, env.JS, "ACME", string(wire.UploadStub(up)), hdr)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 1 })
	id := "DLQ:" + strconv.FormatUint(jetstreamtest.StreamMsgs(t, env.JS, "DLQ")[0].Sequence, 10)

	res, err := o.Show(ctx, id, ShowOptions{MaxSegments: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Payload, big) || res.PayloadSHA256 != sum || res.Referenced == nil ||
		res.Referenced.Ref != payloads.Bucket()+"/upload/ACME/"+sum || res.Referenced.Error != "" || res.Segments.Lines[0].Tag != "UNB" {
		t.Fatalf("show: %d bytes, referenced %+v, first segment %+v", len(res.Payload), res.Referenced, res.Segments.Lines)
	}
	if ev := lastAudit(t, env.JS); ev.Action != "show" || ev.PayloadBefore != sum {
		t.Fatalf("show audited as %+v", ev)
	}
	if p, err := o.Payload(ctx, id); err != nil || !bytes.Equal(p, big) {
		t.Fatalf("editor's payload: %d bytes, %v", len(p), err)
	}

	dry, err := o.Replay(ctx, ReplayRequest{IDs: []string{id}, DryRun: true})
	if err != nil || dry.Items[0].DryRun == nil || !dry.Items[0].DryRun.OK || dry.Items[0].DryRun.Messages != 1 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}

	// an edit too large for the server: stored as an upload, the copy its reference
	edited := edifacttest.TextInvoice("SENDER1:14", "RECEIVER1:14", "BIGREF02", 1200<<10)
	er, err := o.Edit(ctx, id, edited, "new reference")
	if err != nil {
		t.Fatal(err)
	}
	editRaw := getRaw(t, env.JS, er.Edited)
	if len(editRaw.Data) > 256 || editRaw.Header.Get(wire.HdrUploadSHA256) != audit.PayloadHash(edited) || er.After != audit.PayloadHash(edited) || er.Before != sum {
		t.Fatalf("edit %s: %d bytes, headers %v, result %+v", er.Edited, len(editRaw.Data), editRaw.Header, er)
	}
	if res, err := o.Show(ctx, er.Edited, ShowOptions{}); err != nil || !bytes.Equal(res.Payload, edited) {
		t.Fatalf("show the edit: %d bytes, %v", len(res.Payload), err)
	}
	// the replay of the original sends its edit: the reference, not the bytes
	rep, err := o.Replay(ctx, ReplayRequest{IDs: []string{id}})
	if err != nil || rep.Replayed != 1 {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	in := getRaw(t, env.JS, rep.Items[0].NewID)
	if _, p, _ := wire.ParseIngestSubject(in.Subject); len(in.Data) > 256 || in.Header.Get(wire.HdrUploadSHA256) != audit.PayloadHash(edited) || p != "ACME" {
		t.Fatalf("replayed copy on %s: %d bytes, headers %v", in.Subject, len(in.Data), in.Header)
	}
	if ev := lastAudit(t, env.JS); ev.Action != "replay" || ev.PayloadBefore != audit.PayloadHash(edited) {
		t.Fatalf("replay audited as %+v", ev)
	}

	// the replayed announcement is dead-lettered again by this hub; an
	// edit that fits goes inline, without the upload headers
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 2 })
	dl := jetstreamtest.StreamMsgs(t, env.JS, "DLQ")
	again := "DLQ:" + strconv.FormatUint(dl[len(dl)-1].Sequence, 10)
	small := []byte(edifacttest.TextInvoice("SENDER1:14", "RECEIVER1:14", "SMALL001", 2000))
	er2, err := o.Edit(ctx, again, small, "fits")
	if err != nil {
		t.Fatal(err)
	}
	if m := getRaw(t, env.JS, er2.Edited); !bytes.Equal(m.Data, small) || m.Header.Get(wire.HdrUploadSHA256) != "" || m.Header.Get(wire.HdrUploadSize) != "" {
		t.Fatalf("inline edit: %d bytes, headers %v", len(m.Data), m.Header)
	}

	// a reference replayed to another partner names that partner's upload
	jetstreamtest.PublishIngest(t, env.JS, "ACME", string(wire.UploadStub(up)), hdr)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, env.JS, "DLQ") == 4 })
	last := jetstreamtest.StreamMsgs(t, env.JS, "DLQ")[3]
	lastID := "DLQ:" + strconv.FormatUint(last.Sequence, 10)
	rep, err = o.Replay(ctx, ReplayRequest{IDs: []string{lastID}, To: "edi.ingest.BETA"})
	if err != nil || rep.Replayed != 1 {
		t.Fatalf("replay to BETA: %+v %v", rep, err)
	}
	if in := getRaw(t, env.JS, rep.Items[0].NewID); in.Header.Get(wire.HdrUploadSHA256) != sum || len(in.Data) > 256 {
		t.Fatalf("replayed to BETA: %d bytes, headers %v", len(in.Data), in.Header)
	}
	if b, err := obj.GetBytes(ctx, wire.UploadObject("BETA", sum)); err != nil || !bytes.Equal(b, big) {
		t.Fatalf("BETA's upload: %d bytes, %v", len(b), err)
	}

	// bytes gone: shown as the body with the reason, never replayed
	if err := obj.Delete(ctx, wire.UploadObject("ACME", sum)); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.PublishIngest(t, env.JS, "ACME", string(wire.UploadStub(up)), hdr)
	var goneID string
	jetstreamtest.Eventually(t, 10*time.Second, func() bool {
		for _, m := range jetstreamtest.StreamMsgs(t, env.JS, "DLQ") {
			if m.Header.Get(wire.HdrEditedFrom) == "" && m.Sequence > last.Sequence && m.Header.Get(wire.HdrPartnerID) == "ACME" {
				goneID = "DLQ:" + strconv.FormatUint(m.Sequence, 10)
			}
		}
		return goneID != ""
	})
	res, err = o.Show(ctx, goneID, ShowOptions{})
	if err != nil || res.Referenced == nil || res.Referenced.Error == "" || !bytes.Equal(res.Payload, wire.UploadStub(up)) {
		t.Fatalf("show with the bytes gone: %+v, %v", res.Referenced, err)
	}
	rep, err = o.Replay(ctx, ReplayRequest{IDs: []string{goneID}})
	if err != nil || rep.Failed != 1 || !strings.Contains(rep.Items[0].Error, "the payload it refers to") {
		t.Fatalf("replay with the bytes gone: %+v %v", rep, err)
	}
	// the operator supplies the bytes: the edit takes them
	if er, err := o.Edit(ctx, goneID, small, "partner sent the file again"); err != nil || er.Before != audit.PayloadHash(wire.UploadStub(up)) {
		t.Fatalf("edit with the bytes gone: %+v %v", er, err)
	}
}

func getRaw(t *testing.T, j js.JetStream, id string) *js.RawStreamMsg {
	t.Helper()
	ref, err := wire.ParseMsgRef(id, "DLQ", "INGEST", "PARKING", "POISON")
	if err != nil {
		t.Fatal(err)
	}
	s, err := j.Stream(context.Background(), ref.Stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(context.Background(), ref.Seq)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

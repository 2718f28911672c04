package claimcheck_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/client"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

func openUploads(t *testing.T, j js.JetStream) (*claimcheck.Uploads, *claimcheck.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := claimcheck.Open(ctx, j, claimcheck.Config{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	u, err := claimcheck.OpenUploads(ctx, j, s, claimcheck.UploadsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return u, s
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func uploadHeader(sum string, size int) nats.Header {
	return nats.Header{wire.HdrUploadSHA256: {sum}, wire.HdrUploadSize: {strconv.Itoa(size)}}
}

// publishChunks uploads chunks as partner for the upload named sum.
func publishChunks(t *testing.T, j js.JetStream, partner, sum string, chunks ...[]byte) {
	t.Helper()
	for i, c := range chunks {
		m := &nats.Msg{Subject: wire.UploadSubject(partner, sum), Data: c, Header: nats.Header{wire.HdrUploadChunk: {strconv.Itoa(i)}, wire.HdrUploadSHA256: {sum}}}
		if _, err := j.PublishMsg(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// client.Send on a server with the stock 1 MiB max payload uploads a
// 3 MiB interchange in chunks and announces it; Resolve gives back the
// bytes for the partner of the ingest subject, keeps them in the payload
// bucket, drops the chunks, and gives them again (a retry, a replay)
// from the bucket.
func TestSendUploadsAndResolveTakes(t *testing.T) {
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{MaxPayload: 1 << 20})
	l := client.NewLink()
	nc, j, err := ejs.Connect(srv.URL, "upload-test", l.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	u, _ := openUploads(t, j)
	ctx := context.Background()
	if _, err := ejs.EnsureStream(ctx, j, js.StreamConfig{Name: "INGEST", Subjects: []string{wire.IngestWildcard}}); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("LIN+1'"), 3<<20/6)
	var r client.Result
	msg := client.NewMessage("ACME", "big.edi", data, &r)
	ack, chunks, res, err := client.Send(ctx, j, l, "ACME", msg, 10*time.Second)
	if res != client.Published || err != nil || chunks != 4 {
		t.Fatalf("send: %v %v, %d chunks", res, err, chunks)
	}
	ann, err := j.Stream(ctx, "INGEST")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ann.GetMsg(ctx, ack.Sequence)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.Data) > 256 || raw.Header.Get(wire.HdrUploadSHA256) != sha(data) || raw.Header.Get(js.MsgIDHeader) != r.MsgID ||
		raw.Header.Get(wire.HdrFilename) != "big.edi" {
		t.Fatalf("announcement %q %v", raw.Data, raw.Header)
	}
	if n := jetstreamtest.CountMsgs(t, j, wire.DefaultUploadStream); n != 4 {
		t.Fatalf("%d chunks stored, want 4", n)
	}
	// another partner's announcement of the same bytes finds nothing of ACME's
	if _, err := u.Resolve(ctx, "BETA", raw.Header, 10<<20); !refusedErr(err, "no chunk of it on edi.upload.BETA") {
		t.Fatalf("BETA naming ACME's upload: %v", err)
	}
	for i := range 2 { // first from the chunks, then from the bucket
		got, err := u.Resolve(ctx, "ACME", raw.Header, 10<<20)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("resolve %d: %d bytes, %v", i, len(got), err)
		}
		if n := jetstreamtest.CountMsgs(t, j, wire.DefaultUploadStream); n != 0 {
			t.Fatalf("resolve %d: %d chunks left", i, n)
		}
	}
	if _, err := u.Resolve(ctx, "BETA", raw.Header, 10<<20); !refusedErr(err, "no chunk") {
		t.Fatalf("BETA naming ACME's upload once taken: %v", err)
	}
	// a payload small enough goes inline, as before
	var r2 client.Result
	if _, chunks, res, err := client.Send(ctx, j, l, "ACME", client.NewMessage("ACME", "", []byte("UNB"), &r2), 10*time.Second); res != client.Published || chunks != 0 {
		t.Fatalf("small send: %v %v %d chunks", res, err, chunks)
	}
}

func refusedErr(err error, text string) bool {
	var r *claimcheck.RefusedError
	return errors.As(err, &r) && strings.Contains(err.Error(), text)
}

// What an upload's announcement may not do: name bytes other than its
// chunks, miss a chunk, carry more than it says, exceed max_size, or
// carry the hub's x-payload-ref; each is refused for good (and its
// chunks dropped), and an inline message resolves to nothing.
func TestResolveRefusesBadUploads(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	u, s := openUploads(t, j)
	ctx := context.Background()
	a, b := []byte(strings.Repeat("a", 1000)), []byte(strings.Repeat("b", 1000))
	whole := append(append([]byte{}, a...), b...)

	if got, err := u.Resolve(ctx, "ACME", nats.Header{"x-filename": {"f"}}, 100); got != nil || err != nil {
		t.Fatalf("inline: %q %v", got, err)
	}
	forged := nats.Header{"X-Payload-Ref": {s.Bucket() + "/INGEST:1:out:0"}, wire.HdrPayloadSize: {"10"}}
	if _, err := u.Resolve(ctx, "ACME", forged, 100); !refusedErr(err, "the hub's own header") {
		t.Fatalf("forged reference: %v", err)
	}

	wrong := sha([]byte("something else"))
	publishChunks(t, j, "ACME", wrong, a, b)
	if _, err := u.Resolve(ctx, "ACME", uploadHeader(wrong, len(whole)), 1<<20); !refusedErr(err, "hash to "+sha(whole)) {
		t.Fatalf("wrong hash: %v", err)
	}
	if n := jetstreamtest.CountMsgs(t, j, wire.DefaultUploadStream); n != 0 {
		t.Fatalf("a refused upload left %d chunks", n)
	}

	sum := sha(whole)
	publishChunks(t, j, "ACME", sum, a) // chunk 1 never sent
	if _, err := u.Resolve(ctx, "ACME", uploadHeader(sum, len(whole)), 1<<20); !refusedErr(err, "incomplete: 1000 of 2000 bytes") {
		t.Fatalf("incomplete: %v", err)
	}
	m := &nats.Msg{Subject: wire.UploadSubject("ACME", sum), Data: b, Header: nats.Header{wire.HdrUploadChunk: {"1"}, wire.HdrUploadSHA256: {sum}}}
	if _, err := j.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Resolve(ctx, "ACME", uploadHeader(sum, len(whole)), 1<<20); !refusedErr(err, "chunk 0 missing") {
		t.Fatalf("gap: %v", err)
	}
	publishChunks(t, j, "ACME", sum, a, b, a)
	if _, err := u.Resolve(ctx, "ACME", uploadHeader(sum, 1500), 1<<20); !refusedErr(err, "more than its 1500 bytes") {
		t.Fatalf("more than declared: %v", err)
	}
	if _, err := u.Resolve(ctx, "ACME", uploadHeader(sum, len(whole)), 1999); !refusedErr(err, "over parse.max_size (1999 bytes)") {
		t.Fatalf("over max_size: %v", err)
	}
	if _, err := u.Resolve(ctx, "ACME", uploadHeader("NOT-A-HASH", 10), 1999); !refusedErr(err, "not a lower-case hex SHA-256") {
		t.Fatalf("bad name: %v", err)
	}
	// and the same upload, whole, is taken
	publishChunks(t, j, "ACME", sum, a, b)
	if got, err := u.Resolve(ctx, "ACME", uploadHeader(sum, len(whole)), 1<<20); err != nil || !bytes.Equal(got, whole) {
		t.Fatalf("whole: %d bytes, %v", len(got), err)
	}
}

// Chunks of an upload that is never announced (or never completes) are
// dropped after the stream's TTL.
func TestUnfinishedUploadExpires(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	s, err := claimcheck.Open(ctx, j, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claimcheck.OpenUploads(ctx, j, s, claimcheck.UploadsConfig{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	publishChunks(t, j, "ACME", sha([]byte("x")), []byte("half of it"))
	jetstreamtest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		if n := jetstreamtest.CountMsgs(t, j, wire.DefaultUploadStream); n != 0 {
			return errors.New(strconv.Itoa(n) + " chunks still stored")
		}
		return nil
	})
}

package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
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

// quotaServer is a real server with a 64 KiB max payload (edihub send
// cuts 48 KiB chunks) and a 1 MiB upload stream of which one partner may
// take partnerMax bytes.
func quotaServer(t *testing.T, partnerMax int64) (js.JetStream, *client.Link, *claimcheck.Uploads) {
	t.Helper()
	srv := jetstreamtest.StartServer(t, &jetstreamtest.Options{MaxPayload: 64 << 10})
	l := client.NewLink()
	nc, j, err := ejs.Connect(srv.URL, "quota-test", l.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx := context.Background()
	s, err := claimcheck.Open(ctx, j, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := claimcheck.OpenUploads(ctx, j, s, claimcheck.UploadsConfig{MaxBytes: 1 << 20, PartnerMaxBytes: partnerMax})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ejs.EnsureStream(ctx, j, js.StreamConfig{Name: "INGEST", Subjects: []string{wire.IngestWildcard}}); err != nil {
		t.Fatal(err)
	}
	return j, l, u
}

// flood publishes 48 KiB chunks of never-announced uploads as partner
// until the server refuses one; it returns how many it stored and the
// refusal.
func flood(t *testing.T, j js.JetStream, partner string) (int, error) {
	t.Helper()
	chunk := bytes.Repeat([]byte("F"), 48<<10)
	for i := 0; i < 64; i++ { // 3 MiB: three times the stream
		sum := sha([]byte{byte(i)})
		m := &nats.Msg{Subject: wire.UploadSubject(partner, sum), Data: chunk,
			Header: nats.Header{wire.HdrUploadChunk: {"0"}, wire.HdrUploadSHA256: {sum}}}
		if _, err := j.PublishMsg(context.Background(), m); err != nil {
			return i, err
		}
	}
	return 64, nil
}

// One partner flooding the shared upload stream fills its own share (a
// quarter of the stream), no more: the server refuses its next chunk, to
// it alone, and another partner's upload is stored and taken; a taken
// upload gives its chunks back to its partner's share. Without a share
// of its own (the whole stream) the same flood refuses the other
// partner's upload: the test's flood is a real one. Each partner is
// kept to its share by a per-subject limit, as the stream stores all of
// a partner's chunks on one subject; a subject with more tokens is not
// stored at all (it would escape the limit).
func TestPartnerUploadQuota(t *testing.T) {
	ctx := context.Background()
	other := segmentText(200 << 10) // 5 chunks of 48 KiB
	t.Run("a share each", func(t *testing.T) {
		j, l, u := quotaServer(t, 256<<10) // 6 chunks of 48 KiB
		var r client.Result
		own := segmentText(90 << 10) // ACME's own upload: 2 chunks
		if _, chunks, res, err := client.Send(ctx, j, l, "ACME", client.NewMessage("ACME", "own.edi", own, &r), 10*time.Second); res != client.Published || chunks != 2 {
			t.Fatalf("ACME's upload: %v %v, %d chunks", res, err, chunks)
		}
		n, err := flood(t, j, "ACME")
		if n != 4 || !strings.Contains(errString(err), "maximum messages per subject exceeded") {
			t.Fatalf("ACME's flood stored %d chunks beside its upload, then %v; want 4 (its share of 6), then the per-subject refusal", n, err)
		}
		_, chunks, res, err := client.Send(ctx, j, l, "BETA", client.NewMessage("BETA", "b.edi", other, &r), 10*time.Second)
		if res != client.Published || chunks != 5 {
			t.Fatalf("BETA's upload beside ACME's flood: %v %v, %d chunks", res, err, chunks)
		}
		if got, err := u.Resolve(ctx, "BETA", uploadHeader(sha(other), len(other)), 1<<20); err != nil || !bytes.Equal(got, other) {
			t.Fatalf("BETA's upload: %d bytes, %v", len(got), err)
		}
		// ACME's upload, taken, gives its 2 chunks back to ACME's share
		if got, err := u.Resolve(ctx, "ACME", uploadHeader(sha(own), len(own)), 1<<20); err != nil || !bytes.Equal(got, own) {
			t.Fatalf("ACME's upload among its flood: %d bytes, %v", len(got), err)
		}
		if n, err := flood(t, j, "ACME"); n != 2 {
			t.Fatalf("after its upload was taken ACME stored %d more chunks (%v), want 2", n, err)
		}
		// a longer subject is not stored: it would have a limit of its own
		long := &nats.Msg{Subject: wire.UploadSubject("ACME", sha(own)) + ".x", Data: []byte("escape"), Header: nats.Header{wire.HdrUploadSHA256: {sha(own)}}}
		if _, err := j.PublishMsg(ctx, long, js.WithRetryAttempts(0)); !errors.Is(err, js.ErrNoStreamResponse) {
			t.Fatalf("chunk on %s: %v, want no stream to store it", long.Subject, err)
		}
	})
	t.Run("no share of its own", func(t *testing.T) {
		j, l, _ := quotaServer(t, 1<<20)
		if n, err := flood(t, j, "ACME"); n == 64 || !strings.Contains(errString(err), "maximum bytes exceeded") {
			t.Fatalf("flood without a share: %d chunks, %v; want the stream full", n, err)
		}
		var r client.Result
		if _, _, res, err := client.Send(ctx, j, l, "BETA", client.NewMessage("BETA", "b.edi", other, &r), 10*time.Second); res == client.Published {
			t.Fatalf("BETA's upload was stored in a full stream: %v", err)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// segmentText is size bytes of segment-shaped text.
func segmentText(size int) []byte {
	b := bytes.Repeat([]byte("FTX+AAI+++LARGE PAYLOAD TEXT'"), size/29+1)
	return b[:size]
}

// A partner's share: the setting (never below the largest interchange),
// else a quarter of the stream, at least the largest interchange, at most
// the stream.
func TestUploadPartnerBytes(t *testing.T) {
	for _, c := range []struct {
		setting, stream, largest, want int64
		refused                        bool
	}{
		{0, 1 << 30, 10 << 20, 256 << 20, false},
		{0, 16 << 20, 10 << 20, 10 << 20, false},
		{0, 8 << 20, 10 << 20, 8 << 20, false},
		{64 << 20, 1 << 30, 10 << 20, 64 << 20, false},
		{5 << 20, 1 << 30, 10 << 20, 0, true},
	} {
		got, err := claimcheck.Settings{UploadPartnerMaxBytes: c.setting}.UploadPartnerBytes(c.stream, c.largest)
		if got != c.want || (err != nil) != c.refused {
			t.Errorf("setting %d, stream %d, largest %d: %d, %v; want %d (refused %v)", c.setting, c.stream, c.largest, got, err, c.want, c.refused)
		}
	}
}

// An upload stream of the earlier layout (edi.upload.>, no per-partner
// limit) is brought to the shared one with shares when the hub opens it.
func TestUploadStreamOfEarlierLayoutUpdated(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	if _, err := j.CreateStream(ctx, js.StreamConfig{Name: wire.DefaultUploadStream, Subjects: []string{wire.UploadAll},
		Storage: js.FileStorage, MaxAge: time.Hour, MaxBytes: 1 << 20, Discard: js.DiscardNew}); err != nil {
		t.Fatal(err)
	}
	s, err := claimcheck.Open(ctx, j, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claimcheck.OpenUploads(ctx, j, s, claimcheck.UploadsConfig{MaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := j.Stream(ctx, wire.DefaultUploadStream)
	if err != nil {
		t.Fatal(err)
	}
	c := st.CachedInfo().Config
	if len(c.Subjects) != 1 || c.Subjects[0] != wire.UploadChunks || c.SubjectTransform == nil || c.MaxMsgsPerSubject != 1 || !c.DiscardNewPerSubject {
		t.Fatalf("stream after open: subjects %v, transform %+v, per subject %d, discard new per subject %v", c.Subjects, c.SubjectTransform, c.MaxMsgsPerSubject, c.DiscardNewPerSubject)
	}
}

package claimcheck_test

import (
	"bytes"
	"context"
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

// BenchmarkUpload sends a 9.9 MiB interchange and has the hub take it:
// upload (client.Send in chunks on a server with the stock 1 MiB max
// payload) and Resolve (chunks read, SHA-256 checked, kept in the payload
// bucket), beside the plain alternative in the same run, one inline
// publish and read back on a server configured with a 32 MiB max payload.
//
//	go test -run '^$' -bench Upload -benchtime 5x ./claimcheck/
func BenchmarkUpload(b *testing.B) {
	data := bytes.Repeat([]byte("LIN+1'"), 9900<<10/6)
	ctx := context.Background()
	b.Run("upload-1MiB-server", func(b *testing.B) {
		srv := jetstreamtest.StartServer(b, &jetstreamtest.Options{MaxPayload: 1 << 20})
		l := client.NewLink()
		nc, j, err := ejs.Connect(srv.URL, "bench", l.Options()...)
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		u, _ := openUploadsB(b, j)
		if _, err := ejs.EnsureStream(ctx, j, js.StreamConfig{Name: "INGEST", Subjects: []string{wire.IngestWildcard}}); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			d := append(append([]byte{}, data...), byte('0'+i%10)) // a new upload each time
			var r client.Result
			if _, _, res, err := client.Send(ctx, j, l, "ACME", client.NewMessage("ACME", "", d, &r), 30*time.Second); res != client.Published {
				b.Fatal(err)
			}
			h := uploadHeader(sha(d), len(d))
			if got, err := u.Resolve(ctx, "ACME", h, 20<<20); err != nil || len(got) != len(d) {
				b.Fatal(err)
			}
		}
	})
	b.Run("inline-32MiB-server", func(b *testing.B) {
		srv := jetstreamtest.StartServer(b, &jetstreamtest.Options{MaxPayload: 32 << 20})
		_, j := jetstreamtest.Connect(b, srv.URL)
		if _, err := ejs.EnsureStream(ctx, j, js.StreamConfig{Name: "INGEST", Subjects: []string{wire.IngestWildcard}}); err != nil {
			b.Fatal(err)
		}
		st, err := j.Stream(ctx, "INGEST")
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			d := append(append([]byte{}, data...), byte('0'+i%10))
			ack, err := j.Publish(ctx, wire.IngestSubject("ACME"), d)
			if err != nil {
				b.Fatal(err)
			}
			if m, err := st.GetMsg(ctx, ack.Sequence); err != nil || len(m.Data) != len(d) {
				b.Fatal(err)
			}
		}
	})
}

func openUploadsB(b *testing.B, j js.JetStream) (*claimcheck.Uploads, *claimcheck.Store) {
	b.Helper()
	s, err := claimcheck.Open(context.Background(), j, claimcheck.Config{TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	u, err := claimcheck.OpenUploads(context.Background(), j, s, claimcheck.UploadsConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return u, s
}

// BenchmarkResolveInline is what the upload middleware costs a message
// that carries its payload inline (every interchange under the limit).
//
//	go test -run '^$' -bench ResolveInline -benchmem ./claimcheck/
func BenchmarkResolveInline(b *testing.B) {
	srv := jetstreamtest.StartServer(b, nil)
	_, j := jetstreamtest.Connect(b, srv.URL)
	u, _ := openUploadsB(b, j)
	h := nats.Header{"x-correlation-id": {"c1"}, "x-filename": {"a.edi"}, "Nats-Msg-Id": {"send:ACME:x"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if got, err := u.Resolve(ctx, "ACME", h, 10<<20); got != nil || err != nil {
			b.Fatal(err)
		}
	}
}

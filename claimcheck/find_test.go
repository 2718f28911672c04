package claimcheck_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// Find reads an upload without taking it: from the chunks while the hub
// has not taken them (nothing stored, nothing purged), from the payload
// bucket once it has; it refuses another partner's upload, one over
// max_size, and says ErrUploadGone once the chunks expired (a 1 s
// upload_ttl on a real server) or the object is gone.
func TestFindReadsWithoutTaking(t *testing.T) {
	srv := jetstreamtest.StartServer(t, nil)
	_, j := jetstreamtest.Connect(t, srv.URL)
	ctx := context.Background()
	s, err := claimcheck.Open(ctx, j, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := claimcheck.OpenUploads(ctx, j, s, claimcheck.UploadsConfig{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, b := []byte(strings.Repeat("a", 1000)), []byte(strings.Repeat("b", 1000))
	whole := append(append([]byte{}, a...), b...)
	up := wire.Upload{SHA256: sha(whole), Size: int64(len(whole))}
	publishChunks(t, j, "ACME", up.SHA256, a, b)

	got, where, err := claimcheck.Find(ctx, j, "", "", "ACME", up, 1<<20)
	if err != nil || !bytes.Equal(got, whole) || where.Subject != wire.UploadStoredSubject("ACME") || where.Stream != wire.DefaultUploadStream {
		t.Fatalf("from the chunks: %d bytes at %v, %v", len(got), where, err)
	}
	if n := jetstreamtest.CountMsgs(t, j, wire.DefaultUploadStream); n != 2 {
		t.Fatalf("Find left %d chunks, want the 2 it read", n)
	}
	if _, _, err := claimcheck.Find(ctx, j, "", "", "BETA", up, 1<<20); !errors.Is(err, claimcheck.ErrUploadGone) || !refusedErr(err, "no chunk of it on edi.upload.BETA") {
		t.Fatalf("ACME's upload looked up for BETA: %v", err)
	}
	if _, _, err := claimcheck.Find(ctx, j, "", "", "ACME", up, 1999); !refusedErr(err, "over parse.max_size (1999 bytes)") {
		t.Fatalf("over max_size: %v", err)
	}

	// the chunks expire before the hub takes them
	jetstreamtest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		if n := jetstreamtest.CountMsgs(t, j, wire.DefaultUploadStream); n != 0 {
			return errors.New(strconv.Itoa(n) + " chunks still stored")
		}
		return nil
	})
	_, _, err = claimcheck.Find(ctx, j, "", "", "ACME", up, 1<<20)
	if !errors.Is(err, claimcheck.ErrUploadGone) || !refusedErr(err, "expired after hub.claim_check.upload_ttl") {
		t.Fatalf("expired chunks: %v", err)
	}

	// taken by the hub: read from the bucket, where the chunks are gone
	publishChunks(t, j, "ACME", up.SHA256, a, b)
	if _, err := u.Resolve(ctx, "ACME", uploadHeader(up.SHA256, len(whole)), 1<<20); err != nil {
		t.Fatal(err)
	}
	got, where, err = claimcheck.Find(ctx, j, "", "", "ACME", up, 1<<20)
	if err != nil || !bytes.Equal(got, whole) || where.Object != s.Bucket()+"/"+wire.UploadObject("ACME", up.SHA256) {
		t.Fatalf("from the bucket: %d bytes at %v, %v", len(got), where, err)
	}
}

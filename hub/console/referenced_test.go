package console_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/claimcheck"
	"github.com/edihub/edihub/edifact/edifacttest"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
	"github.com/edihub/edihub/wire"
)

// A dead letter whose payload is an upload shows the uploaded bytes
// (fetched and checked by the API), one segment a line, and says where
// they are kept.
func TestConsoleShowsReferencedPayload(t *testing.T) {
	ctx := newTab(t)
	e := newEnv(t)
	store, err := claimcheck.Open(context.Background(), e.JS, claimcheck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := e.JS.ObjectStore(context.Background(), store.Bucket())
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte(edifacttest.Invoice("REFVIEW1"))
	sum := audit.PayloadHash(payload)
	if _, err := obj.PutBytes(context.Background(), wire.UploadObject("ACME", sum), payload); err != nil {
		t.Fatal(err)
	}
	up := wire.Upload{SHA256: sum, Size: int64(len(payload))}
	jetstreamtest.PublishIngest(t, e.JS, "ACME", string(wire.UploadStub(up)),
		nats.Header{wire.HdrUploadSHA256: {sum}, wire.HdrUploadSize: {strconv.Itoa(len(payload))}})
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "DLQ") == 1 })
	login(t, ctx, e.srv.URL, readTok)
	page(t, ctx, "#/message/DLQ:1", "message")
	fact := eval[string](t, ctx, `(document.querySelector('[data-fact="payload stored aside"]') || {}).textContent || ""`)
	if !strings.Contains(fact, store.Bucket()+"/upload/ACME/"+sum) || !strings.Contains(fact, "fetched and checked") {
		t.Fatalf("payload fact %q", fact)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-fact="payload SHA-256"]').textContent`); got != sum {
		t.Fatalf("payload SHA-256 %q, want the upload's %s", got, sum)
	}
	if rows := eval[string](t, ctx, `document.querySelector('#segments').textContent`); !strings.Contains(rows, "REFVIEW1") || !strings.Contains(rows, "UNH+1+INVOIC") {
		t.Fatalf("segments do not show the uploaded bytes: %.300s", rows)
	}
}

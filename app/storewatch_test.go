package app

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	ejs "github.com/edihub/edihub/jetstream"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

// The first write of a hub stream that the store refuses makes /readyz
// not ready, saying so, even while the probe's own small write still
// goes through; readiness returns by itself once writes stop being
// refused.
func TestReadyzNotReadyOnTheFirstRefusedStreamWrite(t *testing.T) {
	srv := startStoreLimitedServer(t, 512<<10)
	nc, j := jetstreamtest.Connect(t, srv.ClientURL())
	wc := newJSWriteCheck(j, 1)
	h := readyzHandler(nc, func() string { return "" }, wc)
	status := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	jetstreamtest.Eventually(t, 15*time.Second, func() bool { code, _ := status(); return code == http.StatusOK })
	ctx := context.Background()
	// A stream bounded below the store: full, it refuses (discard new)
	// while the store still has room for the probe.
	if _, err := ejs.EnsureStream(ctx, j, js.StreamConfig{Name: "INGEST_T", Subjects: []string{"t.in"}, Storage: js.FileStorage,
		MaxBytes: 64 << 10, Discard: js.DiscardNew}); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("x"), 8<<10)
	var refused error
	for i := 0; i < 100 && refused == nil; i++ {
		_, refused = ejs.Publish(ctx, j, &nats.Msg{Subject: "t.in", Data: chunk}, "m"+strings.Repeat("x", i))
	}
	if refused == nil {
		t.Fatal("a 64 KiB stream took 800 KiB")
	}
	code, body := status()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "JetStream store refuses writes") {
		t.Fatalf("after the refusal %v: %d %s", refused, code, body)
	}
	if err := wc.probe(ctx); err != nil {
		t.Fatalf("the probe alone would have said ready: it failed too (%v), the test shows nothing", err)
	}
	jetstreamtest.Eventually(t, 30*time.Second, func() bool { code, _ := status(); return code == http.StatusOK })
}

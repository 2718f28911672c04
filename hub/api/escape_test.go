package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/wire"
)

// A header with a bidi override and a one-byte CSI leaves the API as
// \u202e and \u009b: the same data for a client, nothing for a terminal
// that shows the body.
func TestAPIJSONEscapesC1AndBidiControls(t *testing.T) {
	e := newOpsEnv(t)
	// (DEL and other C0 controls are dropped from a copy's headers.)
	name := "inv\u202efdp.edi\u009b2J"
	hdr := nats.Header{}
	hdr.Set(wire.HdrFilename, name)
	e.deadLettersWith(t, "ACME", hdr, "junk")
	srv := apiServer(t, e)
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/dlq?view=messages", nil)
	req.Header.Set("Authorization", "Bearer "+readTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	for _, raw := range []string{"\u202e", "\u009b", "\x7f"} {
		if strings.Contains(body, raw) {
			t.Fatalf("%q raw in the API's JSON:\n%s", raw, body)
		}
	}
	if !strings.Contains(body, `\u202e`) || !strings.Contains(body, `\u009b`) {
		t.Fatalf("escaped header missing:\n%s", body)
	}
	if !json.Valid(b) || !strings.Contains(mustUnquoteAll(t, b), name) {
		t.Fatalf("not the same data:\n%s", body)
	}
}

// mustUnquoteAll decodes a JSON body and re-renders its strings raw, so
// the test can look for the original value anywhere in it.
func mustUnquoteAll(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			sb.WriteString(x + "\n")
		case []any:
			for _, y := range x {
				walk(y)
			}
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return sb.String()
}

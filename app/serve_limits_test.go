package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// Every stream an interchange is stored in whole is checked, for the
// default size and each partner's.
func TestInterchangeNeeds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SetDefaults()
	cfg.Parse.Partners = map[string]edifact.PartnerConfig{"BIG": {MaxSize: 50 << 20}, "SAME": {}}
	off := false
	cfg.Hub.ClaimCheck.Enabled = &off
	needs := interchangeNeeds(&cfg)
	var got []string
	for _, n := range needs {
		got = append(got, fmt.Sprintf("%s=%d@%s", n.Setting, n.Size, n.Stream))
	}
	want := "parse.max_size=10485760@INGEST parse.max_size=10485760@RETRY parse.max_size=10485760@DLQ " +
		"parse.max_size=10485760@PARKING parse.max_size=10485760@POISON " +
		"parse.partners.BIG.max_size=52428800@INGEST parse.partners.BIG.max_size=52428800@RETRY " +
		"parse.partners.BIG.max_size=52428800@DLQ parse.partners.BIG.max_size=52428800@PARKING " +
		"parse.partners.BIG.max_size=52428800@POISON"
	if strings.Join(got, " ") != want {
		t.Fatalf("needs:\n%s\nwant:\n%s", strings.Join(got, " "), want)
	}
}

// With the claim check on, an interchange over the server's limit is
// uploaded in chunks: what must fit is a chunk, not the interchange.
func TestInterchangeNeedsWithUploads(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SetDefaults()
	for _, n := range interchangeNeeds(&cfg) {
		if n.Size != uploadChunkFloor {
			t.Fatalf("need %s=%d@%s, want a chunk's %d", n.Setting, n.Size, n.Stream, uploadChunkFloor)
		}
	}
}

package parse

import (
	"strconv"
	"strings"
	"testing"
)

// The refused-message lists of a partial dead letter stay bounded for the
// largest legal interchange (100 000 refused messages), and say how many
// they leave out; a short list is written whole.
func TestJoinCappedBoundsTheRefusedLists(t *testing.T) {
	if got := joinCapped([]string{"M1", "M2"}, ",", maxRefusedText); got != "M1,M2" {
		t.Fatalf("short list: %q", got)
	}
	refs := make([]string, 100_000)
	for i := range refs {
		refs[i] = "MSG" + strconv.Itoa(i)
	}
	got := joinCapped(refs, ",", maxRefusedText)
	if len(got) > maxRefusedText+64 || !strings.HasPrefix(got, "MSG0,MSG1,") || !strings.HasSuffix(got, " more") {
		t.Fatalf("%d bytes: %q … %q", len(got), got[:40], got[len(got)-40:])
	}
	n := strings.Count(got, ",") // the kept ones, then the tail
	if !strings.Contains(got, "… and "+strconv.Itoa(len(refs)-n)+" more") {
		t.Fatalf("the tail does not count what was left out: %q", got[len(got)-40:])
	}
}

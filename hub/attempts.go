package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"

	"github.com/edihub/edihub/counter"
)

// backoff is exponential with full jitter, so that a flapping dependency is
// not hammered by every partition in lock step.
func backoff(attempt int, base, max time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d/2 + rand.N(d/2+1)
}

var (
	reHex    = regexp.MustCompile(`0x[0-9a-fA-F]+|\b[0-9a-f]{8,}\b`)
	reNumber = regexp.MustCompile(`[0-9]+`)
	// reByte folds a quoted byte ('a'): "byte 'a' is outside the UNOA
	// repertoire" is one problem whichever letter it is.
	reByte = regexp.MustCompile(`'[^']'`)
)

// fingerprint identifies "the same failure" across attempts: the error's
// type and its message with numbers and addresses folded, plus for panics
// the top frames of the stack. It runs on error texts, never on payloads.
func fingerprint(kind counter.Kind, errType, msg string, frames []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%s|", kind, errType)
	norm := msg
	if len(norm) > 2048 {
		norm = norm[:2048]
	}
	norm = reByte.ReplaceAllString(norm, "#")
	norm = reHex.ReplaceAllString(norm, "#")
	norm = reNumber.ReplaceAllString(norm, "#")
	h.Write([]byte(strings.ToLower(norm)))
	for i, f := range frames {
		if i == 5 {
			break
		}
		fmt.Fprintf(h, "|%s", f)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

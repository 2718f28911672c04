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

// verdict is the attempt check's answer before a handler runs.
type verdict struct {
	poison      bool
	attempts    int  // finished attempts before this delivery
	unexplained int  // of those, how many ended with no recorded outcome
	deaths      int  // of those, how many ended with the process dying while this message ran alone
	solo        bool // this attempt runs alone (set by process)
	cause       string
	class       string
	message     string
	stage       string // the stage of the last recorded failure, if any
}

// checkAttempts decides, before the handler runs, whether a message is
// poison. delivered is JetStream's NumDelivered of this delivery: every
// delivery before it was an attempt, and each attempt that did not record
// an outcome ended because the process died or hung. The record may count
// more failures than the server has deliveries when the consumer was
// re-created; then the record wins.
func checkAttempts(delivered uint64, rec counter.Record, threshold int) verdict {
	attempts := int(delivered) - 1
	if rec.Count > attempts {
		attempts = rec.Count
	}
	deaths := rec.Deaths()
	if rec.Count+deaths > attempts {
		attempts = rec.Count + deaths
	}
	v := verdict{attempts: attempts, unexplained: attempts - rec.Count, deaths: deaths}
	last, hasLast := rec.Last()
	if hasLast {
		v.stage = last.Stage
	}
	if attempts < threshold {
		return v
	}
	switch {
	// A death counts against a message only if it ran alone when the
	// process died (see gate): a crash kills the messages in flight in
	// every partition, and those neighbours must not be quarantined for it.
	case deaths > 0 && deaths+rec.Count >= threshold:
		v.poison = true
		v.cause = "process-died"
		v.class = "crash"
		v.message = fmt.Sprintf("the process died %d times while this message ran alone (%d attempts, %d with no recorded outcome)", deaths, attempts, v.unexplained)
		if hasLast {
			v.message += "; last recorded failure: " + last.Message
		}
	case hasLast && (last.Kind == counter.KindPanic || last.Kind == counter.KindTimeout),
		hasLast && last.Class == string(Unclassified) && rec.SameFingerprint():
		v.poison = true
		v.cause = poisonCause(last)
		v.class = last.Class
		v.message = last.Message
	}
	return v
}

func poisonCause(f counter.Failure) string {
	switch f.Kind {
	case counter.KindPanic:
		return "panic"
	case counter.KindTimeout:
		return "timeout"
	}
	return "repeated-failure"
}

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

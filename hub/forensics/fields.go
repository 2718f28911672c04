package forensics

import (
	"fmt"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/sandbox"
)

// Field is one labelled line of a report as operators read it. The CLI
// (`poison show`) and the console (through the API) print the same fields
// in the same order, so both read alike; values are raw text, escaped by
// whoever displays them.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Fields is the report for people, the verdict first: what the sandbox
// saw (outcome, where it stopped, the error or panic, the signal, the
// resources used and the limits it ran under), then where the message came
// from. The stack and the child's output are multi-line texts of their own
// (Report.Sandbox.Stack and .Stderr), shown preformatted after the fields
// and before the headers.
func (r *Report) Fields() []Field {
	var out []Field
	add := func(name, format string, a ...any) {
		out = append(out, Field{Name: name, Value: fmt.Sprintf(format, a...)})
	}
	if r.Verdict != "" {
		add("verdict", "%s", r.Verdict)
	}
	if sb := r.Sandbox; sb != nil {
		add("outcome", "%s", sb.Outcome)
		if sb.Summary != "" {
			add("summary", "%s", sb.Summary)
		}
		if sb.HasProgress {
			add("progress", "segment %d, offset %d, stage %s %s", sb.Progress.Segment, sb.Progress.Offset, sb.Progress.Stage, sb.Progress.Note)
		}
		if sb.Error != "" {
			add("error", "%s (class %s, cause %s)", sb.Error, sb.ErrorClass, sb.Cause)
		}
		if sb.PanicValue != "" {
			add("panic", "%s", sb.PanicValue)
		}
		if sb.Outcome != OutcomePayloadUnavailable { // no child ran then
			signal := "none"
			if sb.Signal != "" {
				signal = sb.Signal
			}
			add("signal", "%s", signal)
			add("resources", "cpu %s, wall %s, peak %d MiB, exit code %d (%s)", ms(sb.CPUTime), ms(sb.WallTime), sb.PeakRSSBytes>>20,
				sb.ExitCode, sandbox.ExitMeaning(sb.ExitCode, sb.Signal))
			add("limits", "memory %d MiB over a %d MiB start-up, cpu %ds, applied by %s", sb.Limits.MemoryBytes>>20,
				sb.Limits.BaselineDataBytes>>20, sb.Limits.CPUSeconds, sb.Limits.AppliedBy)
		}
		for _, n := range sb.Notes {
			add("note", "%s", n)
		}
	} else {
		add("outcome", "not analysed yet")
	}
	add("partner", "%s", r.Partner)
	add("stage", "%s", r.Stage)
	switch {
	case r.HubMAC == audit.CopyMACv2.String():
		add("copy", "the hub's (x-hub-mac v2 verified: origin, partner, drill and upload headers)")
	case r.HubMAC != "":
		add("copy", "the hub's, older format (x-hub-mac %s verified: origin and drill; partner and upload headers not covered)", r.HubMAC)
	case r.HubMACError != "":
		add("copy", "not shown to be the hub's (%s): its x-* headers (partner, stage, origin) may be anyone's", r.HubMACError)
	}
	if r.PoisonCause != "" {
		add("poison cause", "%s", r.PoisonCause)
	}
	if !r.QuarantinedAt.IsZero() {
		add("quarantined", "%s", r.QuarantinedAt.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if r.Analyses > 0 {
		add("analysed", "%d time(s), last %s by %s", r.Analyses, r.AnalysedAt.UTC().Format("2006-01-02 15:04:05Z"), r.AnalysedBy)
	}
	add("report", "%s", ReportObject(r.Key))
	if r.PayloadSHA256 != "" {
		add("payload", "%d bytes, sha256 %s", r.PayloadBytes, r.PayloadSHA256)
	}
	if u := r.Upload; u != nil {
		if u.Error == "" {
			add("upload", "the copy announces upload %s (%d bytes): the payload is its bytes, read from %s, SHA-256 checked", u.SHA256, u.Size, u.From)
		} else {
			add("upload", "the copy announces upload %s (%d bytes), not read: %s; the payload is the announcement", u.SHA256, u.Size, u.Error)
		}
	}
	if r.Collision != "" {
		add("collision", "%s", r.Collision)
	}
	return out
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

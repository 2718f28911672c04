package drill

import (
	"fmt"
	"strconv"
	"time"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/wire"
)

// The story `edihub drill` tells while it follows a drill message: the
// texts are decided here, the command prints them.

// EventStep is the step and text of a hub event about the drill message
// (threshold: attempts.threshold); step is "" for an event not told.
func EventStep(ev wire.Event, threshold int) (step, text string) {
	switch ev.Kind {
	case wire.EventAttemptFailed:
		return "attempt", fmt.Sprintf("attempt %d of %d failed in stage %s (%s): %s", ev.Attempt, threshold, ev.Stage, ev.Class, ev.Error)
	case wire.EventQuarantined:
		return "quarantined", fmt.Sprintf("quarantined after %d attempts to %s, cause %s: %s", ev.Attempt, ev.Subject, ev.Cause, ev.Error)
	case wire.EventDeadLettered:
		return "dead-lettered", fmt.Sprintf("dead-lettered after %d attempt(s) to %s, cause %s: %s", ev.Attempt, ev.Subject, ev.Cause, ev.Error)
	}
	return "", ""
}

// Expectation says at the start what the drill will do and about how
// long it takes with the hub's attempt settings (those of --config, or the
// defaults).
func Expectation(kind string, a hub.AttemptConfig) string {
	switch kind {
	case Panic:
		return fmt.Sprintf("expect %d panics, retried in place with backoff (%s..%s), then quarantine: a few seconds", a.Threshold, a.BackoffBase, a.BackoffMax)
	case Hang:
		return fmt.Sprintf("expect %d attempts that each hang until the %s deadline, then quarantine: about %s (progress every 10s)",
			a.Threshold, a.Deadline, (time.Duration(a.Threshold) * a.Deadline).Round(time.Second))
	case Exit:
		return fmt.Sprintf("expect the hub to die %d times: once while the drill message runs beside other partitions' messages "+
			"(not held against it), then %d times while it runs alone; each restart takes your supervisor's time plus up to %s (ack_wait)",
			a.Threshold+1, a.Threshold, a.AckWait)
	}
	return "expect a permanent error and the DLQ at once: a few seconds"
}

// DeathsText counts every death: those the drill saw (a connection lost)
// and the hub's own count on the poison copy (x-process-deaths: deaths
// while the message ran alone), plus the first death, while it ran beside
// other partitions' messages, which is held against no message. A restart
// quicker than the drill's reconnect is not seen as a lost connection.
func DeathsText(seen int, hubCount string) string {
	n, err := strconv.Atoi(hubCount)
	if err != nil {
		return fmt.Sprintf("the hub died %d times while this drill watched", seen)
	}
	total := max(seen, n+1)
	text := fmt.Sprintf("the hub died %d times: %d while the drill message ran alone (x-process-deaths, held against it) "+
		"and 1 while it ran beside other partitions' messages (held against none)", total, total-1)
	if seen < total {
		text += fmt.Sprintf("; this drill saw %d of them (the others restarted quicker than it reconnected)", seen)
	}
	return text + ". x-attempts counts deliveries before quarantine: the threshold, or one more when the server had recorded the first death's delivery before the process died"
}

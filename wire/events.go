package wire

import "time"

// Event kinds.
const (
	EventAttemptFailed  = "attempt-failed"
	EventQuarantined    = "quarantined"
	EventDeadLettered   = "dead-lettered"
	EventRetryScheduled = "retry-scheduled"
	// EventDuplicateSkipped: the ledger had seen the interchange (from the
	// same partner); it was acked without outputs. `edihub send` waits
	// for it to tell the sender.
	EventDuplicateSkipped = "duplicate-skipped"
)

// Event is one thing that happened to a failing message, as the hub
// announces it on EventSubject(kind): JSON, best effort.
type Event struct {
	Kind      string    `json:"kind"`
	At        time.Time `json:"at"`
	Stream    string    `json:"stream"` // the interchange's identity
	Seq       uint64    `json:"seq"`
	Partner   string    `json:"partner"`
	Partition int       `json:"partition"`
	Stage     string    `json:"stage,omitempty"`
	Attempt   int       `json:"attempt,omitempty"`
	Delivered uint64    `json:"delivered,omitempty"`
	Class     string    `json:"class,omitempty"`
	Cause     string    `json:"cause,omitempty"`
	Error     string    `json:"error,omitempty"`
	Subject   string    `json:"subject,omitempty"` // where the message went
}

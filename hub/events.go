package hub

import (
	"encoding/json"
	"time"

	"github.com/edihub/edihub/wire"
)

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

// Event is one thing that happened to a failing message.
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

func (h *Hub) emit(d *delivery, ev Event) {
	ev.At = time.Now().UTC()
	ev.Stream, ev.Seq, ev.Partner, ev.Partition = d.origStream, d.origSeq, d.partner, d.partition
	ev.Delivered = d.meta.NumDelivered
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	_ = h.nc.Publish(wire.EventSubject(ev.Kind), b) // best effort: the streams are the record
}

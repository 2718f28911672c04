package hub

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/hub/headers"
)

// Message is one interchange as a stage sees it. Data is the payload byte
// for byte; stages must not modify it.
type Message struct {
	Subject   string // the stored subject, edi.ingest.<partition>.<partner>
	Partner   string
	Partition int
	Stream    string
	Seq       uint64 // stream sequence: the message's identity
	Delivered uint64 // JetStream's delivery count of this attempt
	Header    nats.Header
	Data      []byte
	// MessageID is the interchange control reference, once a stage has read
	// it; dead-letter copies carry it as x-message-id.
	MessageID string

	outputs  []*nats.Msg
	commits  []func() func(context.Context) error
	rechecks []recheck
	recheck1 [1]recheck // rechecks' first: no allocation for the parse stage's one
	stage    string     // the running stage's name
	ahead    bool       // runs ahead of an earlier message of its partner (RunsAhead)
	names    func() []string
	grouped  bool // may settle in a group with others of its partner (SettlesInGroups)
}

// recheck is a stage's decision that depends on the messages of the
// partner before this one (RecheckAtSettle).
type recheck struct {
	stage string
	check func() error
}

// Outputs are the outputs queued so far: messages a stage hands
// downstream. The worker publishes every output of a successful attempt
// before it acks the input.
func (m *Message) Outputs() []*nats.Msg { return m.outputs }

// Emit queues an output. Outputs of a failed attempt are discarded.
func (m *Message) Emit(subject string, h nats.Header, data []byte) {
	m.outputs = append(m.outputs, &nats.Msg{Subject: subject, Header: h, Data: data})
}

// EmitAll queues msgs as outputs and takes them: the caller must not
// change msgs or the messages after. The built-in parse stage hands over
// its decision's outputs so, without a copy of each.
func (m *Message) EmitAll(msgs []*nats.Msg) {
	if len(m.outputs) == 0 {
		m.outputs = msgs[:len(msgs):len(msgs)] // a later Emit appends to a copy
		return
	}
	m.outputs = append(m.outputs, msgs...)
}

// CommitOnSuccess queues a write (the ledger's records) that belongs to
// the attempt's outputs: the worker starts it when it publishes them, once
// every stage succeeded, and acks the input only when the outputs are
// stored and every wait start returned succeeded. A failed one is a failed
// publish: the input is delivered again. A failed attempt starts none.
func (m *Message) CommitOnSuccess(start func() (wait func(context.Context) error)) {
	m.commits = append(m.commits, start)
}

// RunsAhead says the attempt runs while an earlier message of its partner
// is not settled yet (hub.partner_pipeline): what the stage decided on
// what that one stores (the ledger) is to be asked again at its turn
// (RecheckAtSettle). False for a partner's first message in hand and
// without a pipeline.
func (m *Message) RunsAhead() bool { return m.ahead }

// RecheckAtSettle has the worker call check again before the outputs are
// stored, when the attempt ran while an earlier message of its partner was
// not settled yet (hub.partner_pipeline): the ledger's lookup, which could
// not see that message's records. An error fails the attempt as the stage's
// own would (a *DuplicateError: acked without outputs). Not called for an
// attempt that ran with nothing of its partner ahead.
func (m *Message) RecheckAtSettle(check func() error) {
	if m.rechecks == nil {
		m.rechecks = m.recheck1[:0]
	}
	m.rechecks = append(m.rechecks, recheck{stage: m.stage, check: check})
}

// SettlesInGroups says the attempt may settle in a group with others of
// its partner (hub.partner_pipeline above 1, hub.group_settle not off): a
// stage that commits records then names them (NameRecords), else the
// attempt settles on its own.
func (m *Message) SettlesInGroups() bool { return m.grouped }

// NameRecords names what the attempt's CommitOnSuccess writes record (the
// ledger's interchange keys), asked for only when the attempt may settle
// in a group with others of its partner (hub.partner_pipeline): two that
// name the same record never settle in one group, the later one settles
// at its own turn, after its RecheckAtSettle. An attempt with commits or
// rechecks and no names always settles on its own.
func (m *Message) NameRecords(names func() []string) { m.names = names }

// DropOutputs discards the outputs queued so far: a stage that queues
// outputs while it reads and then refuses the message drops them at once
// (the worker drops them too, but not before the stage returns).
func (m *Message) DropOutputs() { m.outputs = nil }

// CarriedHeaders are the producer's headers an output of this message may
// carry (a custom x-* header, a W3C traceparent): what a dead-letter copy
// keeps, without the names the hub owns, the correlation id and the
// payload's signature. Nil when nothing is carried. The map is new at
// each call; the built-in parse stage shares it among a message's outputs.
func (m *Message) CarriedHeaders() nats.Header { return headers.Carried(m.Header) }

// Handler processes a message. Return a *Failure (PermanentError,
// TransientError) to say what failed; any other error is unclassified.
type Handler func(ctx context.Context, m *Message) error

// Stage is one named step of the pipeline; its name appears in subjects
// (edi.<stage>.dlq.<cause>, edi.poison.<stage>).
type Stage struct {
	Name   string
	Handle Handler
	// ControlRef, when set, names the interchange in a payload (its control
	// reference) for a copy made before or without the stage reading it: a
	// quarantine, a failure before the envelope. It must be cheap and
	// bounded on hostile input. Nil: the stage names none.
	ControlRef func(payload []byte) string
}

// Middleware wraps a handler (the drill uses it).
type Middleware func(Handler) Handler

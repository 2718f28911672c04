package forensics

import (
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/wire"
)

// Report is what the worker stores for one quarantined message:
// where it came from (the poison copy's x-* headers), the sandbox's verdict
// and where the payload and the ticket are. It is JSON in the forensic
// bucket under <original stream>/<original seq>/report.json.
type Report struct {
	Version  int    `json:"version"`
	ID       string `json:"id"`  // POISON:<seq>, what operators type
	Key      string `json:"key"` // <original stream>/<original seq>
	Ticket   string `json:"ticket"`
	Verdict  string `json:"verdict"` // one sentence for operators
	Analyses int    `json:"analyses"`

	PoisonStream    string              `json:"poison_stream"`
	PoisonSeq       uint64              `json:"poison_seq"`
	PoisonSubject   string              `json:"poison_subject"`
	OriginalStream  string              `json:"original_stream"`
	OriginalSeq     uint64              `json:"original_seq"`
	OriginalSubject string              `json:"original_subject,omitempty"`
	Partner         string              `json:"partner"`
	Stage           string              `json:"stage"`
	PoisonCause     string              `json:"poison_cause,omitempty"`
	Drill           string              `json:"drill,omitempty"`
	QuarantinedAt   time.Time           `json:"quarantined_at"`
	Headers         map[string][]string `json:"headers"`
	// Collision is set when another POISON message had already claimed
	// this origin: this report is stored under a key of its own.
	Collision string `json:"collision,omitempty"`
	// HubMAC is what the copy's x-hub-mac vouches for: "v2" (what a copy
	// came from, its partner, drill and upload headers), "v1" (an older
	// hub's copy: where it came from and its drill only) or "" (not shown
	// to be the hub's copy: HubMACError says why).
	HubMAC      string `json:"hub_mac,omitempty"`
	HubMACError string `json:"hub_mac_error,omitempty"`

	PayloadObject string `json:"payload_object"`
	PayloadSHA256 string `json:"payload_sha256"`
	PayloadBytes  int    `json:"payload_bytes"`
	// Upload is set when the copy announced an upload: the payload is
	// then the upload's bytes, or (Upload.Error) the announcement.
	Upload *UploadPayload `json:"upload,omitempty"`

	AnalysedAt time.Time       `json:"analysed_at"`
	AnalysedBy string          `json:"analysed_by"`
	Sandbox    *sandbox.Report `json:"sandbox"`
}

// ReportObject and PayloadObject are the object names of a key.
func ReportObject(key string) string  { return key + "/report.json" }
func PayloadObject(key string) string { return key + "/payload" }

// ticketKey turns a report key into a KV key (KV keys allow - _ = . /
// and letters; stream names allow more, so anything else becomes _).
func ticketKey(key string) string {
	b := []byte(strings.ReplaceAll(key, "/", "-"))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return "T-" + string(b)
}

// vouchedPartner is the copy's partner when its x-hub-mac covers it (v2),
// else "": a v1 MAC does not cover x-partner-id, and an unsigned copy's
// headers are anybody's.
func (r *Report) vouchedPartner() string {
	if r.HubMAC == audit.CopyMACv2.String() {
		return r.Partner
	}
	return ""
}

// reportFromPoison fills the provenance part of a report from the poison
// copy's headers; the key falls back to the poison stream's own sequence
// for copies without x-original-* headers (a foreign publisher).
func reportFromPoison(stream string, seq uint64, subject string, h nats.Header, payload []byte) *Report {
	r := &Report{
		Version: 1, ID: wire.PoisonID(seq), PoisonStream: stream, PoisonSeq: seq, PoisonSubject: subject,
		OriginalStream: h.Get(wire.HdrOriginalStream), OriginalSubject: h.Get(wire.HdrOriginalTopic),
		Partner: h.Get(wire.HdrPartnerID), Stage: h.Get(wire.HdrStage), PoisonCause: h.Get(wire.HdrPoisonCause),
		Drill: h.Get(wire.HdrDrill), Headers: map[string][]string{},
		PayloadSHA256: audit.PayloadHash(payload), PayloadBytes: len(payload),
	}
	r.OriginalSeq, _ = strconv.ParseUint(h.Get(wire.HdrOriginalSeq), 10, 64)
	if r.Stage == "" {
		r.Stage, _ = wire.ParsePoisonSubject(subject)
	}
	if t, err := time.Parse(time.RFC3339Nano, h.Get(wire.HdrDetectedAt)); err == nil {
		r.QuarantinedAt = t
	}
	for k, vs := range h {
		r.Headers[k] = append([]string(nil), vs...)
	}
	if r.OriginalStream != "" && r.OriginalSeq > 0 {
		r.Key = r.OriginalStream + "/" + strconv.FormatUint(r.OriginalSeq, 10)
	} else {
		r.Key = stream + "/" + strconv.FormatUint(seq, 10)
	}
	r.PayloadObject = PayloadObject(r.Key)
	r.Ticket = ticketKey(r.Key)
	return r
}

// verdict is the one sentence an operator reads first.
func forensicVerdict(r *sandbox.Report) string {
	switch r.Outcome {
	case sandbox.OutcomeReproducedError:
		return "reproduced: the message fails the same way in isolation; fix the data or the stage, then replay"
	case sandbox.OutcomePanic:
		return "panic reproduced in isolation: a bug in the stage; the stack shows where"
	case sandbox.OutcomeMemoryCap:
		return "memory cap hit: the message makes the stage allocate without bound; it would take the hub down"
	case sandbox.OutcomeCPUCap:
		return "CPU cap hit: the stage spins on this message (endless loop or pathological input)"
	case sandbox.OutcomeWallTimeout:
		return "wall-clock timeout: the stage blocked without using CPU (a lock, a network call, a sleep)"
	case sandbox.OutcomeKilledBySignal:
		return "killed by a signal: the stage or the kernel ended the process"
	case sandbox.OutcomeCrashed:
		return "crashed: the process exited without a result (os.Exit or a fatal runtime error)"
	case OutcomePayloadUnavailable:
		return "not analysed: the upload this announcement names could not be read as those bytes (the summary says why); the stored payload is the announcement"
	case sandbox.OutcomeParsedFine:
		return "parsed fine in isolation: the cause was environmental (resources, timing, a dependency) or a schema/version mismatch between the worker and this binary"
	}
	return string(r.Outcome)
}

// Ticket states.
const (
	TicketOpen   = "open"
	TicketAcked  = "acked"
	TicketClosed = "closed"
)

// Ticket is the analysis ticket of one quarantined message, in the KV
// bucket under its ID. Notes keep who did what, with the audit trail in
// the AUDIT stream as the tamper-evident copy.
type Ticket struct {
	ID        string       `json:"id"`
	State     string       `json:"state"`
	PoisonID  string       `json:"poison_id"`
	ReportKey string       `json:"report_key"`
	Partner   string       `json:"partner"`
	Stage     string       `json:"stage"`
	Cause     string       `json:"cause"` // the sandbox outcome
	Summary   string       `json:"summary"`
	Notes     []TicketNote `json:"notes,omitempty"`
	Created   time.Time    `json:"created"`
	Updated   time.Time    `json:"updated"`
}

// TicketReplayed is the note action NoteReplayed writes (its text is the
// replayed copy's ID).
const TicketReplayed = "replayed"

// replayedAs is where the message was last replayed to, from the notes.
func (t *Ticket) replayedAs() string {
	for i := len(t.Notes) - 1; i >= 0; i-- {
		if t.Notes[i].Action == TicketReplayed {
			return t.Notes[i].Text
		}
	}
	return ""
}

// TicketNote is one step in a ticket's life.
type TicketNote struct {
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"` // open, reanalyse, ack, close, replayed
	Text   string    `json:"text,omitempty"`
}

// Summary is published on <prefix>.<partner> when a report is
// stored: enough to route an alert, with the keys to fetch the rest.
type Summary struct {
	ID        string    `json:"id"`
	Key       string    `json:"key"`
	Ticket    string    `json:"ticket"`
	Partner   string    `json:"partner"`
	Stage     string    `json:"stage"`
	Outcome   string    `json:"outcome"`
	Summary   string    `json:"summary"`
	Verdict   string    `json:"verdict"`
	Bucket    string    `json:"bucket"`
	At        time.Time `json:"at"`
	Reanalyse bool      `json:"reanalyse,omitempty"`
}

package client

import (
	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

// Status of a file.
const (
	StatusStored  = "stored"   // the server acked it
	StatusFailed  = "failed"   // unreadable, or the server refused it
	StatusUnknown = "unknown"  // sent, then the hub went away before its ack: maybe stored
	StatusNotSent = "not-sent" // the sender gave up before this file
)

// Result is what became of one file sent: its status, where the server
// stored it, the ids it was sent under and the hub's verdict (Outcome).
type Result struct {
	File          string `json:"file"`
	OK            bool   `json:"ok"`
	Status        string `json:"status"`
	Stream        string `json:"stream,omitempty"`
	Seq           uint64 `json:"seq,omitempty"`
	Bytes         int    `json:"bytes"`
	Chunks        int    `json:"chunks,omitempty"` // uploaded in so many chunks (over the server's limit); 0: inline
	MsgID         string `json:"msg_id,omitempty"`
	CorrelationID string `json:"correlation_id,omitempty"`
	Outcome       string `json:"outcome,omitempty"`
	Where         string `json:"where,omitempty"`
	Detail        string `json:"detail,omitempty"`
	Error         string `json:"error,omitempty"`
}

// NewMessage is the message that sends data as partner: on
// edi.ingest.<partner>, with a fresh correlation id, the dedupe id of the
// bytes (Nats-Msg-Id: the same bytes sent again are dropped by the
// server) and the file name when there is one ("" or "-": none). It
// notes the ids in r.
func NewMessage(partner, file string, data []byte, r *Result) *nats.Msg {
	r.Bytes = len(data)
	r.CorrelationID = nuid.Next()
	r.MsgID = wire.SendMsgID(partner, data)
	msg := &nats.Msg{Subject: wire.IngestSubject(partner), Data: data, Header: nats.Header{}}
	msg.Header.Set(wire.HdrCorrelationID, r.CorrelationID)
	msg.Header.Set(js.MsgIDHeader, r.MsgID)
	if file != "" && file != "-" {
		msg.Header.Set(wire.HdrFilename, escape.Header(file))
	}
	return msg
}

// Signed gives msg, once a signature header is set on it, the dedupe id
// of the signed bytes: a re-signed send is a new one to the server.
func Signed(partner string, msg *nats.Msg, r *Result) {
	if sig := msg.Header.Get(wire.HdrSignature); sig != "" {
		r.MsgID = wire.SignedSendMsgID(partner, msg.Data, sig)
		msg.Header.Set(js.MsgIDHeader, r.MsgID)
	}
}

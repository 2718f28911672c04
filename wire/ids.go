package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MsgRef identifies a stored message as STREAM:SEQ (DLQ:1234). The
// sequence is the stream's own and never reused, so the ID is stable and
// printable: it is what operators type.
type MsgRef struct {
	Stream string
	Seq    uint64
}

func (r MsgRef) String() string { return r.Stream + ":" + strconv.FormatUint(r.Seq, 10) }

// KVKey is r as a KV key (':' is not allowed there).
func (r MsgRef) KVKey() string { return r.Stream + "." + strconv.FormatUint(r.Seq, 10) }

// RefOfKVKey turns a KVKey back into the ID (DLQ.1234 → DLQ:1234).
func RefOfKVKey(k string) string {
	i := strings.LastIndexByte(k, '.')
	if i < 0 {
		return k
	}
	return k[:i] + ":" + k[i+1:]
}

// ErrBadID is returned for an ID that is not STREAM:SEQ of an allowed stream.
var ErrBadID = errors.New("bad message ID")

// ParseMsgRef reads an ID such as DLQ:1234 (stream names case-insensitive)
// and accepts only the streams listed. The error quotes s with %q, so it
// is safe to print whatever s holds.
func ParseMsgRef(s string, streams ...string) (MsgRef, error) {
	name, seqStr, ok := strings.Cut(strings.TrimSpace(s), ":")
	seq, err := strconv.ParseUint(seqStr, 10, 64)
	if !ok || err != nil || seq == 0 {
		eg := "DLQ"
		if len(streams) > 0 {
			eg = streams[0]
		}
		return MsgRef{}, fmt.Errorf("%w %q: want STREAM:SEQ, e.g. %s:1234", ErrBadID, s, eg)
	}
	for _, st := range streams {
		if strings.EqualFold(name, st) {
			return MsgRef{Stream: st, Seq: seq}, nil
		}
	}
	return MsgRef{}, fmt.Errorf("%w %q: the stream must be one of %s", ErrBadID, s, strings.Join(streams, ", "))
}

// PoisonID is the operator's name for a POISON stream sequence.
func PoisonID(seq uint64) string { return DefaultPoisonStream + ":" + strconv.FormatUint(seq, 10) }

// ParsePoisonID reads POISON:<seq> (or a bare sequence number) with
// ParseMsgRef, the one ID parser.
func ParsePoisonID(id string) (uint64, error) {
	if n, err := strconv.ParseUint(id, 10, 64); err == nil && n > 0 {
		return n, nil
	}
	ref, err := ParseMsgRef(id, DefaultPoisonStream)
	return ref.Seq, err
}

// MsgID is the Nats-Msg-Id of a copy the hub makes of stream message seq:
// <stream>:<seq>:<kind>. A crash between publishing the copy and acking the
// original re-publishes under the same id, which the server drops.
func MsgID(stream string, seq uint64, kind string) string {
	return stream + ":" + strconv.FormatUint(seq, 10) + ":" + kind
}

// OutputMsgID is the dedupe id of output i of an interchange.
func OutputMsgID(stream string, seq uint64, i int) string {
	return MsgID(stream, seq, "out:"+strconv.Itoa(i))
}

// CorrelationID names an interchange across hops when the producer gave none.
func CorrelationID(stream string, seq uint64) string {
	return stream + "-" + strconv.FormatUint(seq, 10)
}

// ReportKey names an interchange's forensic report: <stream>/<seq>.
func ReportKey(stream string, seq uint64) string {
	return stream + "/" + strconv.FormatUint(seq, 10)
}

// SendMsgID is the Nats-Msg-Id `edihub send` gives a file: the partner and
// a SHA-256 of the bytes. Re-sending a file whose ack was lost (the hub went
// away mid-batch) is then dropped by the server within INGEST's duplicate
// window, and the same bytes from another partner are not its duplicate.
func SendMsgID(partner string, data []byte) string {
	sum := sha256.Sum256(data)
	return "send:" + partner + ":" + hex.EncodeToString(sum[:])
}

// SignedSendMsgID is SendMsgID for a file sent with a signature: the same
// bytes signed are another message than unsigned (or signed with another
// key), so a partner whose unsigned file was refused can send it signed at
// once instead of after the duplicate window.
func SignedSendMsgID(partner string, data []byte, signature string) string {
	sum := sha256.Sum256([]byte(signature))
	return SendMsgID(partner, data) + ":sig:" + hex.EncodeToString(sum[:8])
}

// OperatorCopyMsgID is the Nats-Msg-Id of an operator's copy (kind replay
// or edit) for partner: <kind>:<partner>:<token>, where token is an HMAC
// with the hub's key (or a random nonce) that no producer can compute, so
// nobody can publish the id first and have the server drop the hub's copy
// as a duplicate.
func OperatorCopyMsgID(kind, partner, token string) string {
	return kind + ":" + partner + ":" + token
}

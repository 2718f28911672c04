package parse

import (
	"errors"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/wire"
)

// StageName is the built-in stage's name (edi.parse.dlq.<cause>).
const StageName = "parse"

// deadLetter is the one dead letter of a partially accepted interchange:
// the payload byte for byte (a dead letter per refused message would need
// a copy of the interchange per message), on the cause of the first
// refusal, with x-refused-messages naming every refused message and
// x-error-msg their reasons. The hub's copies carry the same x-original-*
// headers; the stage signs it (x-hub-mac) when it has the audit keys.
func deadLetter(in *Input, d *Decision) *nats.Msg {
	first := d.Refused[0].Err
	cause := wire.CauseSchema
	var f *hub.Failure
	if errors.As(first, &f) {
		cause = f.Cause
	}
	h := make(nats.Header, len(in.Carry)+12)
	for k, vs := range in.Carry {
		h[k] = vs
	}
	refs := make([]string, len(d.Refused))
	msgs := make([]string, len(d.Refused))
	for i, r := range d.Refused {
		refs[i] = r.Ref
		msgs[i] = r.Err.Error()
	}
	h.Set(wire.HdrOriginalTopic, wire.IngestSubject(in.Partner))
	h.Set(wire.HdrOriginalStream, in.Stream)
	h.Set(wire.HdrOriginalSeq, strconv.FormatUint(in.Seq, 10))
	h.Set(wire.HdrPartnerID, in.Partner)
	if d.MessageID != "" {
		h.Set(wire.HdrMessageID, escape.Header(d.MessageID))
	}
	h.Set(wire.HdrCorrelationID, in.correlation())
	h.Set(wire.HdrStage, StageName)
	h.Set(wire.HdrErrorClass, string(hub.Permanent))
	h.Set(wire.HdrErrorCause, cause)
	h.Set(wire.HdrErrorMsg, escape.Header(strconv.Itoa(len(refs))+" of "+strconv.Itoa(d.Messages)+
		" messages refused, the others published: "+joinCapped(msgs, "; ", maxRefusedText)))
	h.Set(wire.HdrRefusedMessages, escape.Header(joinCapped(refs, ",", maxRefusedText)))
	var fh hub.FailureHeaderer
	if errors.As(first, &fh) {
		for k, v := range fh.FailureHeaders() {
			if wire.RefusalHeader(k) && v != "" {
				h.Set(k, escape.Header(v))
			}
		}
	}
	return &nats.Msg{Subject: wire.DLQSubject(StageName, cause), Header: h, Data: in.Data}
}

// maxRefusedText bounds each of the two lists on the dead letter: a legal
// 10 MiB interchange may hold 100 000 refused messages, and a header that
// long would pass the server's header limit (64 KiB) and its max payload,
// turning the partner's refusal into a failed publish.
const maxRefusedText = 8 << 10

// joinCapped joins items with sep up to about max bytes, then says how many
// were left out ("… and 99 more").
func joinCapped(items []string, sep string, max int) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 && b.Len()+len(sep)+len(it) > max {
			b.WriteString(sep + "… and " + strconv.Itoa(len(items)-i) + " more")
			break
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(it)
	}
	return b.String()
}

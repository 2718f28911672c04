package hub

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/hub/audit"
	"github.com/edihub/edihub/wire"
)

// EDIFACTConfig tunes the built-in parse stage.
type EDIFACTConfig struct {
	// MaxSize is the largest interchange accepted, in bytes (10 MiB).
	MaxSize int64 `yaml:"max_size"`
	// MaxSegmentLen and MaxElementLen cap one segment and one element.
	MaxSegmentLen int `yaml:"max_segment_len"`
	MaxElementLen int `yaml:"max_element_len"`
	// Lenient accepts characters outside the declared repertoire (lowercase
	// or UTF-8 under UNOA) as warnings instead of refusing the interchange.
	Lenient bool `yaml:"lenient"`
	// Partners overrides max_size and lenient per partner ID.
	Partners map[string]PartnerEDIFACT `yaml:"partners"`
}

// PartnerEDIFACT overrides the parse settings for one partner.
type PartnerEDIFACT struct {
	MaxSize int64 `yaml:"max_size"`
	Lenient *bool `yaml:"lenient"`
}

// Options returns the edifact options for a partner.
func (c EDIFACTConfig) Options(partner string) *edifact.Options {
	o := &edifact.Options{MaxSize: c.MaxSize, MaxSegmentLen: c.MaxSegmentLen, MaxElementLen: c.MaxElementLen, Lenient: c.Lenient}
	if p, ok := c.Partners[partner]; ok {
		if p.MaxSize > 0 {
			o.MaxSize = p.MaxSize
		}
		if p.Lenient != nil {
			o.Lenient = *p.Lenient
		}
	}
	return o
}

func (c *EDIFACTConfig) setDefaults() {
	if c.MaxSize == 0 {
		c.MaxSize = edifact.DefaultMaxSize
	}
	setInt(&c.MaxSegmentLen, edifact.DefaultMaxSegmentLen)
	setInt(&c.MaxElementLen, edifact.DefaultMaxElementLen)
}

func (c EDIFACTConfig) validate() []error {
	if err := c.Options("").Validate(); err != nil {
		return []error{fmt.Errorf("edifact: %w", err)}
	}
	return nil
}

// ParseStage is the built-in stage: guard, parse and envelope checks, then
// one JSON view per message (UNH..UNT or ST..SE) on
// edi.parsed.<partner>.<type>. Every refusal is permanent with cause
// schema: retrying a broken interchange cannot help.
//
// With a ledger, an interchange whose every envelope was processed before
// is a duplicate (a replay, or the partner sending it again): the stage
// returns a *DuplicateError and the worker acks it without outputs, unless
// the message carries x-replay-force: true.
func ParseStage(cfg EDIFACTConfig, led Ledger) Stage {
	return Stage{Name: "parse", Handle: func(ctx context.Context, m *Message) error {
		opts := cfg.Options(m.Partner)
		// Two passes of Walk: the first validates every envelope (all or
		// nothing), the second renders one message at a time, so memory is
		// bounded by the largest message rather than ten times the input.
		doc, err := edifact.Walk(m.Data, opts, nil)
		if err != nil {
			return PermanentError(wire.CauseSchema, err)
		}
		if len(doc.Messages()) == 0 {
			return PermanentError(wire.CauseSchema, fmt.Errorf("the interchange holds no message"))
		}
		var keys []LedgerKey
		origin := wire.MsgRef{Stream: m.Stream, Seq: m.Seq}.String()
		if led != nil {
			keys = LedgerKeys(m.Partner, doc)
			forced := false
			if m.Header.Get(wire.HdrReplayForce) == "true" {
				if forced, err = led.Granted(m.Header.Get(wire.HdrReplayedFrom), audit.PayloadHash(m.Data)); err != nil {
					return TransientError("", fmt.Errorf("interchange ledger: %w", err))
				}
			}
			if !forced {
				dup, err := allDuplicates(led, keys, origin)
				if err != nil {
					return TransientError("", fmt.Errorf("interchange ledger: %w", err))
				}
				if dup {
					return &DuplicateError{Keys: keys}
				}
			}
		}
		corr := cmp.Or(m.Header.Get(wire.HdrCorrelationID), wire.CorrelationID(m.Stream, m.Seq))
		i := 0
		_, err = edifact.Walk(m.Data, opts, func(em *edifact.Message) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			i++
			body, err := edifact.MessageJSON(em)
			if err != nil {
				return PermanentError(wire.CauseSchema, fmt.Errorf("message %d (%s): %w", i, em.Ref, err))
			}
			ich := em.Interchange
			if i == 1 {
				m.MessageID = ich.ControlRef
			}
			h := nats.Header{}
			h.Set(wire.HdrPartnerID, m.Partner)
			h.Set(wire.HdrMessageID, ich.ControlRef)
			h.Set(wire.HdrMessageRef, em.Ref)
			h.Set(wire.HdrMessageType, em.Type)
			h.Set(wire.HdrStandard, ich.Standard)
			h.Set(wire.HdrOriginalSeq, strconv.FormatUint(m.Seq, 10))
			h.Set(wire.HdrCorrelationID, corr)
			m.Emit(wire.ParsedSubject(m.Partner, wire.SubjectToken(em.Type)), h, body)
			return nil
		})
		if err != nil {
			var f *Failure
			if errors.As(err, &f) || ctx.Err() != nil {
				return err
			}
			return PermanentError(wire.CauseSchema, err)
		}
		// The ledger records travel with the outputs: stored together,
		// awaited together, before the interchange is acked.
		for _, k := range keys {
			if rec := led.RecordMsgBy(k, origin); rec != nil {
				m.Emit(rec.Subject, rec.Header, rec.Data)
			}
		}
		return nil
	}}
}

// peekControlRef reads only the interchange header of a payload to name
// the interchange on a quarantine copy. It reads at most two segments of
// bounded size, so a hostile payload cannot make it expensive.
func peekControlRef(data []byte) string {
	r := edifact.NewReader(bytes.NewReader(data))
	r.MaxSegmentLen = 4096
	r.MaxElementLen = 512
	for i := 0; i < 2; i++ {
		seg, err := r.Read()
		if err != nil {
			return ""
		}
		switch seg.Tag {
		case "UNB":
			return seg.Value(5, 1)
		case "ISA":
			return seg.Value(13, 1)
		}
	}
	return ""
}

// LedgerKeys are the ledger keys of an interchange document sent by partner.
func LedgerKeys(partner string, doc *edifact.Document) []LedgerKey {
	keys := make([]LedgerKey, 0, len(doc.Interchanges))
	for _, ich := range doc.Interchanges {
		keys = append(keys, LedgerKey{Partner: partner, Sender: ich.Sender.ID, Recipient: ich.Recipient.ID, ControlRef: ich.ControlRef})
	}
	return keys
}

// allDuplicates: an interchange is a duplicate when every envelope in it
// was processed by another message.
func allDuplicates(l Ledger, keys []LedgerKey, origin string) (bool, error) {
	for _, k := range keys {
		dup, err := l.Duplicate(k, origin)
		if err != nil || !dup {
			return false, err
		}
	}
	return len(keys) > 0, nil
}

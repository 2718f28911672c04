package edifact

import (
	"fmt"
	"strconv"
)

// MessageJSON renders m's JSON view: the bytes MarshalJSON gives, written
// directly without the intermediate view and reflection in the common case
// (every value ASCII, no repeated data elements; the rest takes
// MarshalJSON). It renders into one buffer sized from the segments
// beforehand, so a message costs one allocation. The hub's parse stage
// publishes exactly this.
func MessageJSON(m *Message) ([]byte, error) {
	j := jsonWriter{b: make([]byte, 0, jsonSize(m))}
	j.message(m)
	if j.bad {
		return m.MarshalJSON()
	}
	return j.b, nil
}

// jsonSize is the length of em's JSON view unless values need escapes:
// the envelope, then per segment its tag and brackets, per element its
// brackets and comma, per value its quotes and comma.
func jsonSize(em *Message) int {
	n := 1024
	for i := range em.Segments {
		s := &em.Segments[i]
		n += 32 + len(s.Tag)
		for _, e := range s.Elements {
			n += 3
			for _, v := range e {
				n += 3 + len(v)
			}
		}
	}
	return n
}

// jsonWriter appends the JSON view documented in package edifact (field
// order of its jsonMessage). bad is set at the first value it does not
// render exactly as encoding/json would after the library's charset
// conversion: a byte outside ASCII, or repeated elements.
type jsonWriter struct {
	b   []byte
	bad bool
}

func (j *jsonWriter) message(em *Message) {
	ic := em.Interchange
	if ic == nil {
		j.bad = true
		return
	}
	j.b = fmt.Appendf(j.b, `{"jsonVersion":%d,"standard":`, JSONVersion)
	j.str(ic.Standard)
	j.key(`,"interchange":{"syntax":`, ic.Syntax)
	j.key(`,"syntaxVersion":`, ic.SyntaxVersion)
	j.party(`,"sender":`, ic.Sender)
	j.party(`,"recipient":`, ic.Recipient)
	j.key(`,"date":`, ic.Date)
	j.key(`,"time":`, ic.Time)
	j.key(`,"controlRef":`, ic.ControlRef)
	j.key(`,"applicationRef":`, ic.ApplicationRef)
	j.key(`,"ackRequest":`, ic.AckRequest)
	j.key(`,"testIndicator":`, ic.TestIndicator)
	sep := ic.Separators
	j.sep(`,"separators":{"component":`, sep.Component)
	j.sep(`,"element":`, sep.Element)
	j.sep(`,"decimal":`, sep.Decimal)
	j.sep(`,"release":`, sep.Release)
	j.sep(`,"repetition":`, sep.Repetition)
	j.sep(`,"segment":`, sep.Segment)
	j.b = append(j.b, `},"offset":`...)
	j.b = strconv.AppendInt(j.b, ic.Offset, 10)
	j.b = append(j.b, `},"group":`...)
	if g := em.Group; g == nil {
		j.b = append(j.b, "null"...)
	} else {
		j.key(`{"id":`, g.ID)
		j.party(`,"sender":`, g.Sender)
		j.party(`,"recipient":`, g.Recipient)
		j.key(`,"date":`, g.Date)
		j.key(`,"time":`, g.Time)
		j.key(`,"controlRef":`, g.ControlRef)
		j.key(`,"agency":`, g.Agency)
		j.key(`,"version":`, g.Version)
		j.key(`,"release":`, g.Release)
		j.b = append(j.b, '}')
	}
	j.key(`,"message":{"ref":`, em.Ref)
	j.key(`,"type":`, em.Type)
	j.key(`,"version":`, em.Version)
	j.key(`,"release":`, em.Release)
	j.key(`,"agency":`, em.Agency)
	j.key(`,"association":`, em.Association)
	groupRef := ""
	if em.Group != nil {
		groupRef = em.Group.ControlRef
	}
	j.key(`,"groupRef":`, groupRef)
	j.b = append(j.b, `,"segmentCount":`...)
	j.b = strconv.AppendInt(j.b, int64(len(em.Segments)), 10)
	j.b = append(j.b, `,"offset":`...)
	j.b = strconv.AppendInt(j.b, em.Offset, 10)
	j.b = append(j.b, `},"segments":[`...)
	for i := range em.Segments {
		s := &em.Segments[i]
		if len(s.Repeats) > 0 {
			j.bad = true
			return
		}
		if i > 0 {
			j.b = append(j.b, ',')
		}
		j.key(`{"tag":`, s.Tag)
		j.b = append(j.b, `,"elements":[`...)
		for k, e := range s.Elements {
			if k > 0 {
				j.b = append(j.b, ',')
			}
			j.b = append(j.b, '[')
			for c, v := range e {
				if c > 0 {
					j.b = append(j.b, ',')
				}
				j.str(v)
			}
			j.b = append(j.b, ']')
		}
		j.b = append(j.b, "]}"...)
		if j.bad {
			return
		}
	}
	j.b = append(j.b, "]}"...)
}

func (j *jsonWriter) key(k, v string) {
	j.b = append(j.b, k...)
	j.str(v)
}

func (j *jsonWriter) party(k string, p Party) {
	j.b = append(j.b, k...)
	j.key(`{"id":`, p.ID)
	j.key(`,"qualifier":`, p.Qualifier)
	j.key(`,"routing":`, p.Routing)
	j.b = append(j.b, '}')
}

func (j *jsonWriter) sep(k string, c byte) {
	if c == 0 {
		j.key(k, "")
		return
	}
	j.key(k, string(rune(c))) // one byte below 0x80: no allocation
}

// str appends s quoted as encoding/json does without HTML escaping; a
// byte from 0x80 up sets bad (the library converts the charset first).
func (j *jsonWriter) str(s string) {
	j.b = append(j.b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			continue
		}
		if c >= 0x80 {
			j.bad = true
			return
		}
		j.b = append(j.b, s[start:i]...)
		switch c {
		case '"', '\\':
			j.b = append(j.b, '\\', c)
		case '\b':
			j.b = append(j.b, '\\', 'b')
		case '\f':
			j.b = append(j.b, '\\', 'f')
		case '\n':
			j.b = append(j.b, '\\', 'n')
		case '\r':
			j.b = append(j.b, '\\', 'r')
		case '\t':
			j.b = append(j.b, '\\', 't')
		default:
			const hex = "0123456789abcdef"
			j.b = append(j.b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	j.b = append(j.b, s[start:]...)
	j.b = append(j.b, '"')
}

package edifact

import (
	"strconv"
	"sync"
)

// MessageJSON renders m's JSON view: the bytes MarshalJSON gives, written
// directly without the intermediate view and reflection in the common case
// (every value ASCII, no repeated data elements; the rest takes
// MarshalJSON). A small message renders into a pooled buffer and returns
// an exact-size copy, so it costs one allocation of its own size. A large
// one (over sizedFrom segments) renders into one buffer sized beforehand
// from its segments (viewSize) and returns that buffer: no growth by
// doubling, no copy, so the view is allocated once instead of two or three
// times its size (a 9.9 MB interchange of tiny segments has a 55 MB view;
// BenchmarkStageMemory in parse). The hub's parse stage publishes exactly
// this.
func MessageJSON(m *Message) ([]byte, error) {
	if len(m.Segments) > sizedFrom {
		return sizedMessageJSON(m)
	}
	bp := jsonBufs.Get().(*[]byte)
	j := jsonWriter{b: (*bp)[:0]}
	j.message(m)
	if j.bad {
		putJSONBuf(bp, j.b)
		return m.MarshalJSON()
	}
	out := make([]byte, len(j.b))
	copy(out, j.b)
	putJSONBuf(bp, j.b)
	return out, nil
}

// sizedFrom is the segment count above which MessageJSON sizes its buffer
// first: about 64 KiB of view and up, where the pool does not help.
const sizedFrom = 2048

// sizedMessageJSON is MessageJSON into a buffer of viewSize(m) bytes. The
// size is exact for values that need no escape; one that does grows the
// buffer once by append (still correct, only a copy more). A buffer with
// more than an eighth to spare is copied to its exact size.
func sizedMessageJSON(m *Message) ([]byte, error) {
	j := jsonWriter{b: make([]byte, 0, viewSize(m))}
	j.message(m)
	if j.bad {
		return m.MarshalJSON()
	}
	if spare := cap(j.b) - len(j.b); spare > len(j.b)/8 {
		return append([]byte(nil), j.b...), nil
	}
	return j.b[:len(j.b):len(j.b)], nil
}

// viewSize is the length of m's view when no value needs an escape: the
// segments array exactly, the envelope fields generously (they are
// short; an escape there costs an append).
func viewSize(m *Message) int {
	n := 1024
	if ic := m.Interchange; ic != nil {
		n += 2 * (len(ic.Standard) + len(ic.Syntax) + len(ic.SyntaxVersion) + len(ic.Date) + len(ic.Time) + len(ic.ControlRef) +
			len(ic.ApplicationRef) + len(ic.AckRequest) + len(ic.TestIndicator) + partyLen(ic.Sender) + partyLen(ic.Recipient))
	}
	if g := m.Group; g != nil {
		n += 2 * (len(g.ID) + partyLen(g.Sender) + partyLen(g.Recipient) + len(g.Date) + len(g.Time) + len(g.ControlRef) +
			len(g.Agency) + len(g.Version) + len(g.Release))
	}
	n += 2 * (len(m.Ref) + len(m.Type) + len(m.Version) + len(m.Release) + len(m.Agency) + len(m.Association))
	for i := range m.Segments {
		s := &m.Segments[i]
		// ,{"tag":"X","elements":[...]} (the first has no comma: one spare)
		n += len(`,{"tag":"","elements":[]}`) + len(s.Tag)
		for k, e := range s.Elements {
			n += len(`[]`) + min(k, 1) // ,[...]
			for c, v := range e {
				n += len(`""`) + len(v) + min(c, 1) // ,"v"
			}
		}
	}
	return n
}

func partyLen(p Party) int { return len(p.ID) + len(p.Qualifier) + len(p.Routing) }

// jsonBufs holds MessageJSON's render buffers; one larger than
// maxJSONBuf (a huge message) is not kept.
var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxJSONBuf = 1 << 20

func putJSONBuf(bp *[]byte, b []byte) {
	if cap(b) > maxJSONBuf {
		return
	}
	*bp = b[:0]
	jsonBufs.Put(bp)
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
	if j.head(em, len(em.Segments)); !j.bad {
		j.segments(em.Segments)
	}
}

// head appends the view up to and with the opening of its segments array,
// for a message of count segments.
func (j *jsonWriter) head(em *Message, count int) {
	ic := em.Interchange
	if ic == nil {
		j.bad = true
		return
	}
	j.b = append(j.b, `{"jsonVersion":`...)
	j.b = strconv.AppendInt(j.b, JSONVersion, 10)
	j.b = append(j.b, `,"standard":`...)
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
	j.b = strconv.AppendInt(j.b, int64(count), 10)
	j.b = append(j.b, `,"offset":`...)
	j.b = strconv.AppendInt(j.b, em.Offset, 10)
	j.b = append(j.b, `},"segments":[`...)
}

// segments appends the segments array's entries and closes the view.
func (j *jsonWriter) segments(segs []Segment) {
	for i := range segs {
		if i > 0 {
			j.b = append(j.b, ',')
		}
		if !j.segment(&segs[i]) {
			return
		}
	}
	j.b = append(j.b, "]}"...)
}

// segment appends s's entry of the segments array. The values are copied
// as they are and checked after (plain is the common case); a value that
// needs escapes is written again by str. False (j.bad set) at a repeated
// data element or a value str does not render.
func (j *jsonWriter) segment(s *Segment) bool {
	if len(s.Repeats) > 0 {
		j.bad = true
		return false
	}
	j.b = append(j.b, `{"tag":`...)
	if j.str(s.Tag); j.bad {
		return false
	}
	b := append(j.b, `,"elements":[`...)
	for k, e := range s.Elements {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for c, v := range e {
			if c > 0 {
				b = append(b, ',')
			}
			mark := len(b)
			b = append(b, '"')
			b = append(b, v...)
			if !plainJSON(b[mark+1:]) {
				j.b = b[:mark]
				if j.str(v); j.bad {
					return false
				}
				b = j.b
				continue
			}
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	j.b = append(b, "]}"...)
	return true
}

// plainJSON reports whether every byte of v is plain (see jsonPlain).
func plainJSON(v []byte) bool {
	for _, c := range v {
		if !jsonPlain[c] {
			return false
		}
	}
	return true
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
// Runs of plain bytes are copied at once; jsonPlain says which bytes are.
func (j *jsonWriter) str(s string) {
	b := append(j.b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if jsonPlain[c] {
			continue
		}
		if c >= 0x80 {
			j.b, j.bad = b, true
			return
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	j.b = append(b, '"')
}

// jsonPlain marks the bytes str copies as they are: printable ASCII but the
// quote and the backslash.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

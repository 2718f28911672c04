package edifact

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// JSONVersion is the version of the JSON view documented in doc.go. It changes
// only when a field changes meaning or disappears; new fields may be added.
const JSONVersion = 1

type jsonParty struct {
	ID        string `json:"id"`
	Qualifier string `json:"qualifier"`
	Routing   string `json:"routing"`
}

type jsonSeparators struct {
	Component  string `json:"component"`
	Element    string `json:"element"`
	Decimal    string `json:"decimal"`
	Release    string `json:"release"`
	Repetition string `json:"repetition"`
	Segment    string `json:"segment"`
}

type jsonEnvelope struct {
	Syntax         string         `json:"syntax"`
	SyntaxVersion  string         `json:"syntaxVersion"`
	Sender         jsonParty      `json:"sender"`
	Recipient      jsonParty      `json:"recipient"`
	Date           string         `json:"date"`
	Time           string         `json:"time"`
	ControlRef     string         `json:"controlRef"`
	ApplicationRef string         `json:"applicationRef"`
	AckRequest     string         `json:"ackRequest"`
	TestIndicator  string         `json:"testIndicator"`
	Separators     jsonSeparators `json:"separators"`
	Offset         int64          `json:"offset"`
}

type jsonGroup struct {
	ID         string    `json:"id"`
	Sender     jsonParty `json:"sender"`
	Recipient  jsonParty `json:"recipient"`
	Date       string    `json:"date"`
	Time       string    `json:"time"`
	ControlRef string    `json:"controlRef"`
	Agency     string    `json:"agency"`
	Version    string    `json:"version"`
	Release    string    `json:"release"`
}

type jsonMessageHead struct {
	Ref          string `json:"ref"`
	Type         string `json:"type"`
	Version      string `json:"version"`
	Release      string `json:"release"`
	Agency       string `json:"agency"`
	Association  string `json:"association"`
	GroupRef     string `json:"groupRef"`
	SegmentCount int    `json:"segmentCount"`
	Offset       int64  `json:"offset"`
}

type jsonSegment struct {
	Tag      string                `json:"tag"`
	Elements [][]string            `json:"elements"`
	Repeats  map[string][][]string `json:"repeats,omitempty"`
}

type jsonMessageInDoc struct {
	jsonMessageHead
	Segments []jsonSegment `json:"segments"`
}

type jsonInterchange struct {
	jsonEnvelope
	Groups   []jsonGroup        `json:"groups"`
	Messages []jsonMessageInDoc `json:"messages"`
}

type jsonDocument struct {
	JSONVersion  int               `json:"jsonVersion"`
	Standard     string            `json:"standard"`
	SegmentCount int               `json:"segmentCount"`
	Interchanges []jsonInterchange `json:"interchanges"`
	Warnings     []Warning         `json:"warnings"`
}

// jsonMessage is the view of one message with its envelope: what the hub
// publishes once per UNH (or ST).
type jsonMessage struct {
	JSONVersion int             `json:"jsonVersion"`
	Standard    string          `json:"standard"`
	Interchange jsonEnvelope    `json:"interchange"`
	Group       *jsonGroup      `json:"group"`
	Message     jsonMessageHead `json:"message"`
	Segments    []jsonSegment   `json:"segments"`
}

// MarshalJSON renders the whole document (see doc.go for the fields).
func (d *Document) MarshalJSON() ([]byte, error) {
	v := jsonDocument{JSONVersion: JSONVersion, Standard: d.Standard, SegmentCount: d.Segments,
		Interchanges: make([]jsonInterchange, 0, len(d.Interchanges)), Warnings: d.Warnings}
	if v.Warnings == nil {
		v.Warnings = []Warning{}
	}
	for _, ic := range d.Interchanges {
		ji := jsonInterchange{jsonEnvelope: ic.envelopeJSON(), Groups: make([]jsonGroup, 0, len(ic.Groups)),
			Messages: make([]jsonMessageInDoc, 0, len(ic.Messages))}
		for _, g := range ic.Groups {
			ji.Groups = append(ji.Groups, g.json(ic.cs))
		}
		for _, m := range ic.Messages {
			ji.Messages = append(ji.Messages, jsonMessageInDoc{m.head(), m.segmentsJSON()})
		}
		v.Interchanges = append(v.Interchanges, ji)
	}
	return marshal(v)
}

// MarshalJSON renders one message together with its interchange envelope
// and group: the unit the hub publishes on edi.parsed.<partner>.<type>.
func (m *Message) MarshalJSON() ([]byte, error) {
	return marshal(m.jsonView(m.segmentsJSON()))
}

// jsonView is m's view with segs for its segments.
func (m *Message) jsonView(segs []jsonSegment) jsonMessage {
	v := jsonMessage{JSONVersion: JSONVersion, Message: m.head(), Segments: segs}
	if ic := m.Interchange; ic != nil {
		v.Standard = ic.Standard
		v.Interchange = ic.envelopeJSON()
		if m.Group != nil {
			g := m.Group.json(ic.cs)
			v.Group = &g
		}
	}
	return v
}

// marshal encodes without HTML escaping: "&" and ">" in partner data stay
// readable for downstream apps (encoding/json would write \u0026).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (ic *Interchange) text(s string) string {
	if ic == nil || ic.cs == nil {
		return anyText.toUTF8(s)
	}
	return ic.cs.toUTF8(s)
}

func (ic *Interchange) envelopeJSON() jsonEnvelope {
	t := ic.text
	p := func(x Party) jsonParty { return jsonParty{t(x.ID), t(x.Qualifier), t(x.Routing)} }
	sep := func(c byte) string {
		if c == 0 {
			return ""
		}
		return string(rune(c))
	}
	s := ic.Separators
	return jsonEnvelope{Syntax: t(ic.Syntax), SyntaxVersion: t(ic.SyntaxVersion), Sender: p(ic.Sender), Recipient: p(ic.Recipient),
		Date: t(ic.Date), Time: t(ic.Time), ControlRef: t(ic.ControlRef), ApplicationRef: t(ic.ApplicationRef),
		AckRequest: t(ic.AckRequest), TestIndicator: t(ic.TestIndicator), Offset: ic.Offset,
		Separators: jsonSeparators{sep(s.Component), sep(s.Element), sep(s.Decimal), sep(s.Release), sep(s.Repetition), sep(s.Segment)}}
}

func (g *Group) json(cs *charset) jsonGroup {
	t := cs.toUTF8
	p := func(x Party) jsonParty { return jsonParty{t(x.ID), t(x.Qualifier), t(x.Routing)} }
	return jsonGroup{ID: t(g.ID), Sender: p(g.Sender), Recipient: p(g.Recipient), Date: t(g.Date), Time: t(g.Time),
		ControlRef: t(g.ControlRef), Agency: t(g.Agency), Version: t(g.Version), Release: t(g.Release)}
}

func (m *Message) head() jsonMessageHead {
	t := m.Interchange.text
	h := jsonMessageHead{Ref: t(m.Ref), Type: t(m.Type), Version: t(m.Version), Release: t(m.Release),
		Agency: t(m.Agency), Association: t(m.Association), SegmentCount: m.SegmentCount(), Offset: m.Offset}
	if m.Group != nil {
		h.GroupRef = t(m.Group.ControlRef)
	}
	return h
}

func (m *Message) segmentsJSON() []jsonSegment {
	segs := make([]jsonSegment, len(m.Segments))
	for i := range m.Segments {
		segs[i] = m.segmentJSON(&m.Segments[i])
	}
	return segs
}

// segmentJSON is the view of one of m's segments.
func (m *Message) segmentJSON(s *Segment) jsonSegment {
	t := m.Interchange.text
	conv := func(in []string) []string {
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = t(s)
		}
		return out
	}
	js := jsonSegment{Tag: s.Tag, Elements: make([][]string, len(s.Elements))}
	for j, e := range s.Elements {
		js.Elements[j] = conv(e)
	}
	for _, rp := range s.Repeats {
		if js.Repeats == nil {
			js.Repeats = map[string][][]string{}
		}
		occ := make([][]string, len(rp.Occurrences))
		for k, o := range rp.Occurrences {
			occ[k] = conv(o)
		}
		js.Repeats[strconv.Itoa(rp.Element)] = occ
	}
	return js
}

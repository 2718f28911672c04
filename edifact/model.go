package edifact

// Document is a parsed input: one or more interchanges of one standard.
type Document struct {
	Standard     string // EDIFACT or X12
	Interchanges []*Interchange
	Segments     int       // segments read, UNA not counted
	Warnings     []Warning // tolerated deviations (Lenient mode)
}

// Messages returns every message of every interchange, in input order.
func (d *Document) Messages() []*Message {
	var out []*Message
	for _, ic := range d.Interchanges {
		out = append(out, ic.Messages...)
	}
	return out
}

// Party is an interchange or group sender or recipient.
type Party struct {
	ID        string
	Qualifier string // partner identification code qualifier (EDIFACT 0007, X12 ISA05/07)
	Routing   string // EDIFACT 0008 / 0014 (reverse routing or internal ID)
}

// Interchange is one UNB..UNZ (or ISA..IEA) envelope.
type Interchange struct {
	Standard       string
	Syntax         string // syntax identifier (UNOA...), "X12" for X12
	SyntaxVersion  string // 1..4, or ISA12
	Sender         Party
	Recipient      Party
	Date           string // as sent: YYMMDD or CCYYMMDD
	Time           string // HHMM
	ControlRef     string // UNB 0020 / ISA13, the hub's x-message-id
	ApplicationRef string // UNB 0026 / X12: empty
	AckRequest     string // UNB 0031 / ISA14
	TestIndicator  string // UNB 0035 / ISA15 (P or T)
	Separators     Separators
	Groups         []*Group
	Messages       []*Message // all messages, also those inside groups
	Offset         int64      // of UNB / ISA
	Segments       int        // UNB/ISA through UNZ/IEA
	// Header and Trailer are copies of the UNB and UNZ (ISA, IEA)
	// segments, for the directory's service segment validation
	// (directory.Validator.ValidateInterchange); Trailer is nil until the
	// trailer is checked.
	Header, Trailer *Segment

	cs   *charset
	nmsg int // messages closed so far, also when Messages is not kept (Check)
}

// Group is a functional group UNG..UNE (GS..GE).
type Group struct {
	ID         string // UNG 0038 / GS01 functional identifier
	Sender     Party
	Recipient  Party
	Date, Time string
	ControlRef string // UNG 0048 / GS06
	Agency     string // UNG 0051 / GS07
	Version    string // UNG S008 0052 / GS08
	Release    string // UNG S008 0054
	Messages   []*Message
	// Header and Trailer are copies of the UNG and UNE (GS, GE) segments.
	Header, Trailer *Segment

	nmsg int // messages closed so far, also when Messages is not kept (Check)
}

// Message is one UNH..UNT (ST..SE) with its segments, header and trailer
// included, so that len(Segments) is what the trailer counts.
type Message struct {
	Ref         string // UNH 0062 / ST02
	Type        string // S009 0065 / ST01 (e.g. INVOIC, 850)
	Version     string // S009 0052 / GS08
	Release     string // S009 0054 / ST03 implementation convention
	Agency      string // S009 0051 / GS07
	Association string // S009 0057 (e.g. EAN008)
	Segments    []Segment
	Offset      int64 // of UNH / ST

	Interchange *Interchange
	Group       *Group // nil outside a functional group

	// streamed is set for a message WalkViews renders while reading it
	// (streamview.go); a pointer, so that a Message stays as small as it
	// was.
	streamed *streamedMessage
}

// streamedMessage is what a message rendered while read has instead of
// its segments: how many were rendered and dropped (Segments then holds
// none), the number of its UNH (ST), and where EachSegment reads them
// again (during the WalkViews callback only).
type streamedMessage struct {
	count, first int
	src          *segmentSource
}

// SegmentCount is the number of the message's segments, header and
// trailer included: len(Segments), or for a message WalkViews handed over
// with its view (and no Segments) the number it had.
func (m *Message) SegmentCount() int {
	if m.streamed != nil {
		return m.streamed.count + len(m.Segments)
	}
	return len(m.Segments)
}

// firstNumber is the segment number of the message's UNH (ST).
func (m *Message) firstNumber() int {
	if m.streamed != nil {
		return m.streamed.first
	}
	return m.Segments[0].Number
}

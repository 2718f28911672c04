package ops

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/parse"
)

// The one payload view of the runbook: dlq show, poison show and the API
// show a payload one segment a line with its offset, decoded by the
// charset its UNB declares (edifact.CharsetOf) and escaped once by the
// escape package (controls and bidi as \xNN of their bytes), and the
// unreadable rest as escaped bytes.

// SegmentLine is one EDIFACT (or X12) segment as shown to an operator.
type SegmentLine struct {
	N      int    `json:"n"`      // 1-based segment number (UNA not counted)
	Offset int64  `json:"offset"` // byte offset of the tag
	Tag    string `json:"tag"`    // escaped
	Text   string `json:"text"`   // the segment decoded (Charset) and escaped, without the line break after it
}

// SegmentView is a payload shown one segment a line. When the reader stops
// at an error, Error says why and Rest holds the unread bytes, escaped.
type SegmentView struct {
	Standard  string        `json:"standard,omitempty"`
	Charset   string        `json:"charset,omitempty"`   // how Lines were decoded: UTF-8, ISO-8859-1, ...
	SyntaxID  string        `json:"syntax_id,omitempty"` // the UNB syntax identifier that says so (escaped)
	Prefix    string        `json:"prefix,omitempty"`    // bytes before the first segment (UNA, BOM), escaped
	Lines     []SegmentLine `json:"lines"`
	Error     string        `json:"error,omitempty"`
	RestAt    int64         `json:"rest_offset,omitempty"`
	Rest      string        `json:"rest,omitempty"`
	Truncated bool          `json:"truncated,omitempty"` // stopped at maxLines or maxRest
}

// Segments reads data with the EDIFACT reader and returns at most maxLines
// segments (0 = no limit) and at most maxRest bytes of an unreadable rest.
// It never fails: a payload that is not EDI at all is all Rest. An XML
// payload (UBL) is shown one element a line instead (ublSegments).
func Segments(data []byte, maxLines, maxRest int) SegmentView {
	if parse.LooksXML(data) { // as the parse stage tells them apart
		return ublSegments(data, maxLines, maxRest)
	}
	var v SegmentView
	cs := edifact.CharsetOf(edifact.SyntaxIDOf(data), data)
	v.Charset, v.SyntaxID = cs.Name, escape.Line(cs.SyntaxID)
	r := edifact.NewReader(bytes.NewReader(data))
	prev := int64(0)
	for {
		seg, err := r.Read()
		if errors.Is(err, io.EOF) {
			v.Standard = r.Standard()
			if prev < int64(len(data)) && strings.Trim(string(data[prev:]), "\r\n\x00\x1a") != "" {
				v.RestAt, v.Rest = prev, restOf(data, prev, maxRest, &v)
			}
			return v
		}
		if err != nil {
			v.Standard = r.Standard()
			v.Error = escape.Text(err.Error()) // the reader quotes input escaped already
			v.RestAt = prev
			v.Rest = restOf(data, prev, maxRest, &v)
			return v
		}
		if len(v.Lines) == 0 && seg.Offset > 0 {
			v.Prefix = escape.Line(string(data[:min(seg.Offset, int64(len(data)))]))
		}
		end := min(r.InputOffset(), int64(len(data)))
		start := min(seg.Offset, end)
		text := bytes.TrimRight(data[start:end], "\r\n")
		v.Lines = append(v.Lines, SegmentLine{N: seg.Number, Offset: seg.Offset, Tag: escape.Line(seg.Tag), Text: escape.Decoded(text, cs.DecodeRune)})
		prev = end
		if maxLines > 0 && len(v.Lines) >= maxLines {
			v.Truncated = prev < int64(len(data))
			v.Standard = r.Standard()
			return v
		}
	}
}

func restOf(data []byte, at int64, maxRest int, v *SegmentView) string {
	rest := data[at:]
	if maxRest > 0 && len(rest) > maxRest {
		rest = rest[:maxRest]
		v.Truncated = true
	}
	return escape.Terminal(rest)
}

// Render writes the view for a terminal: offset, segment number and the
// escaped segment, one a line.
func (v SegmentView) Render(w io.Writer) {
	if v.Prefix != "" {
		io.WriteString(w, "      @0      "+v.Prefix+"\n")
	}
	var b []byte
	for _, l := range v.Lines {
		b = b[:0]
		b = appendPadded(b, l.N, 5)
		b = append(b, " @"...)
		b = appendPadded(b, int(l.Offset), -7)
		b = append(b, ' ')
		b = append(b, l.Text...)
		b = append(b, '\n')
		w.Write(b)
	}
	if v.Error != "" && v.Standard == "UBL" && len(v.Lines) > 0 {
		io.WriteString(w, "  !! "+v.Error+"\n")
	} else if v.Error != "" {
		io.WriteString(w, "  !! reader stopped: "+v.Error+"\n")
	}
	if v.Rest != "" {
		io.WriteString(w, "  -- unread bytes from offset "+strconv.Itoa(int(v.RestAt))+" (escaped):\n")
		io.WriteString(w, v.Rest)
		if !strings.HasSuffix(v.Rest, "\n") {
			io.WriteString(w, "\n")
		}
	}
	if v.Truncated {
		io.WriteString(w, "  -- truncated (use --all to see everything)\n")
	}
}

// appendPadded right-aligns n in width (left-aligns for negative width).
func appendPadded(b []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	left := width < 0
	if left {
		width = -width
	}
	if left {
		b = append(b, s...)
	}
	for i := len(s); i < width; i++ {
		b = append(b, ' ')
	}
	if !left {
		b = append(b, s...)
	}
	return b
}

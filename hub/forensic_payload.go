package hub

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/edihub/edihub/edifact"
)

// EscapeTerminal makes hostile bytes safe to print (see escape in
// display.go). With keepNewlines, LF and tab stay as they are (for stacks
// and stderr); nothing else does.
func EscapeTerminal(s string, keepNewlines bool) string {
	if keepNewlines {
		return escape([]byte(s), rawLines)
	}
	return EscapeLine(s)
}

// PayloadLine is one line of a payload display: an EDIFACT or X12 segment
// (Segment > 0), the UNA or bytes between segments (Segment 0), or a
// chunk of input that is not EDI.
type PayloadLine struct {
	Offset  int64  `json:"offset"`
	Segment int    `json:"segment,omitempty"`
	Tag     string `json:"tag,omitempty"`
	Text    string `json:"text"` // escaped with EscapeTerminal
	Bytes   int    `json:"bytes"`
}

// Display limits: a 10 MiB payload must not become a 40 MiB terminal dump.
const (
	maxLineBytes   = 512
	chunkBytes     = 64
	defaultMaxRows = 2000
)

// PayloadLines splits a payload for display: one segment per line with its
// offset when the Reader understands it, fixed-size escaped chunks from the
// first byte it does not (or from the start, for a payload that is not
// EDI). maxRows bounds the lines (0: 2000); a last line says what was cut.
func PayloadLines(payload []byte, maxRows int) []PayloadLine {
	if maxRows <= 0 {
		maxRows = defaultMaxRows
	}
	var out []PayloadLine
	add := func(off int64, seg int, tag string, raw []byte) bool {
		if len(out) >= maxRows {
			return false
		}
		text := raw
		if len(text) > maxLineBytes {
			text = text[:maxLineBytes]
		}
		l := PayloadLine{Offset: off, Segment: seg, Tag: tag, Text: EscapeTerminal(string(text), false), Bytes: len(raw)}
		if len(raw) > len(text) {
			l.Text += "…"
		}
		out = append(out, l)
		return true
	}
	chunks := func(from int64) {
		for p := from; p < int64(len(payload)); p += chunkBytes {
			if !add(p, 0, "", payload[p:min(p+chunkBytes, int64(len(payload)))]) {
				return
			}
		}
	}
	r := edifact.NewReader(bytes.NewReader(payload))
	var pos int64
	for {
		seg, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			chunks(pos)
			return capLines(out, payload, maxRows)
		}
		end := r.InputOffset()
		if seg.Offset > pos && !add(pos, 0, "", payload[pos:seg.Offset]) {
			break
		}
		if !add(seg.Offset, seg.Number, seg.Tag, payload[seg.Offset:end]) {
			break
		}
		pos = end
	}
	if pos < int64(len(payload)) && len(out) < maxRows {
		chunks(pos)
	}
	return capLines(out, payload, maxRows)
}

func capLines(out []PayloadLine, payload []byte, maxRows int) []PayloadLine {
	if len(out) >= maxRows {
		last := out[len(out)-1]
		shown := last.Offset + int64(last.Bytes)
		out = append(out, PayloadLine{Offset: shown, Text: "… " + strconv.FormatInt(int64(len(payload))-shown, 10) + " more bytes not shown"})
	}
	return out
}

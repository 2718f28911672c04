package edifact

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"
)

// Standards recognised by Guard and the Reader.
const (
	EDIFACT = "EDIFACT"
	X12     = "X12"
)

// maxWarnings bounds the warnings Guard keeps: a lowercase UNOA file would
// otherwise produce one per byte. The last one summarises the rest.
const maxWarnings = 10

// GuardResult is what Guard learned from the first interchange header.
type GuardResult struct {
	Body          []byte // the input without BOM and trailing NUL/Ctrl-Z; aliases the input
	Offset        int64  // offset of Body[0] in the input (3 after a BOM)
	Standard      string // EDIFACT or X12
	Syntax        string // syntax identifier (UNOA...UNOY, IATA...); "X12" for X12
	SyntaxVersion string // 1..4 for EDIFACT, ISA12 (e.g. 00401) for X12
	Separators    Separators
	Warnings      []Warning

	// src, when set (GuardReaderAt), holds the body from Offset to end and
	// Body only its head: the scans then read it in chunks.
	src io.ReaderAt
	end int64
}

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16BE = []byte{0xFE, 0xFF}
	bomUTF16LE = []byte{0xFF, 0xFE}
)

// Guard is the cheap check that runs before the parser: one pass over the
// bytes, no allocation proportional to the input. It enforces the size limit,
// strips a UTF-8 BOM and trailing NUL/Ctrl-Z padding, requires an interchange
// header (UNA, UNB or ISA) at the start, reads the syntax identifier and checks
// every byte against its repertoire. Errors are *GuardError.
func Guard(data []byte, opts *Options) (*GuardResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, &GuardError{Code: CodeUnspecified, Msg: err.Error()}
	}
	o := opts.setDefaults()
	if int64(len(data)) > o.MaxSize {
		return nil, &GuardError{Offset: o.MaxSize, Code: CodeUnspecified,
			Msg: fmt.Sprintf("input is %d bytes, over the limit of %d", len(data), o.MaxSize)}
	}
	start := 0
	switch {
	case bytes.HasPrefix(data, bomUTF8):
		start = len(bomUTF8)
	case bytes.HasPrefix(data, bomUTF16BE), bytes.HasPrefix(data, bomUTF16LE):
		return nil, &GuardError{Code: CodeSyntaxNotSupported, Msg: "input is UTF-16 (byte order mark); EDI must be sent in 8-bit bytes"}
	}
	end := len(data)
	for end > start && (data[end-1] == 0x00 || data[end-1] == 0x1A) {
		end--
	}
	g := &GuardResult{Body: data[start:end], Offset: int64(start)}
	if err := g.header(&o); err != nil {
		return nil, err
	}
	return g, nil
}

// header finds and reads the first interchange header, then scans the bytes.
func (g *GuardResult) header(o *Options) error {
	body, base := g.Body, g.Offset
	i := skipNewlines(body, 0)
	if i == len(body) {
		return &GuardError{Offset: base + int64(i), Code: CodeMissing, Msg: "input is empty"}
	}
	rest := body[i:]
	switch {
	case bytes.HasPrefix(rest, []byte("UNA")):
		if len(rest) < unaLen {
			return &GuardError{Offset: base + int64(len(body)), Code: CodeMissing,
				Msg: fmt.Sprintf("UNA is cut off after %d bytes, needs 9", len(rest))}
		}
		s, rep, serr := parseUNA(rest)
		if serr != nil {
			return &GuardError{Offset: base + int64(i+serr.pos), Code: CodeInvalidServiceChar, Msg: serr.msg}
		}
		j := skipNewlines(body, i+unaLen)
		if !bytes.HasPrefix(body[j:], []byte("UNB")) {
			return &GuardError{Offset: base + int64(j), Code: CodeMissing,
				Msg: fmt.Sprintf("UNA is not followed by UNB (found %s)", quoted(string(head(body[j:], 8)), 8))}
		}
		g.Standard, g.Separators = EDIFACT, s
		return g.edifact(o, j, rep)
	case bytes.HasPrefix(rest, []byte("UNB")):
		if len(rest) < 4 {
			return &GuardError{Offset: base + int64(len(body)), Code: CodeMissing, Msg: "UNB is cut off"}
		}
		switch rest[3] {
		case defaultsA.Element:
			g.Separators = defaultsA
		case defaultsB.Element:
			g.Separators = defaultsB
		default:
			return &GuardError{Offset: base + int64(i+3), Code: CodeInvalidServiceChar,
				Msg: fmt.Sprintf("UNB is followed by %s; without UNA it must be '+' (level A) or 0x1D (level B)", quoteByte(rest[3]))}
		}
		g.Standard = EDIFACT
		rep := byte(defaultRepetitionA)
		if g.Separators.Element == defaultsB.Element {
			rep = defaultRepetitionB
		}
		return g.edifact(o, i, rep)
	case bytes.HasPrefix(rest, []byte("ISA")):
		s, version, serr := parseISA(rest)
		if serr != nil {
			code := CodeInvalidServiceChar
			if len(rest) < isaLen {
				code = CodeMissing
			}
			return &GuardError{Offset: base + int64(i+serr.pos), Code: code, Msg: serr.msg}
		}
		g.Standard, g.Syntax, g.SyntaxVersion, g.Separators = X12, X12, version, s
		return g.scan(o, anyText)
	}
	return &GuardError{Offset: base + int64(i), Code: CodeMissing, Msg: junkMessage(body, i)}
}

// junkMessage explains what the input starts with instead of a header.
func junkMessage(body []byte, i int) string {
	found := quoted(string(head(body[i:], 8)), 8)
	switch {
	case bytes.HasPrefix(body[i:], []byte("UNH")):
		return "message without interchange envelope: UNH but no UNB"
	case bytes.HasPrefix(body[i:], []byte("STX=")):
		return "TRADACOMS (STX) is not supported: expected UNA, UNB or ISA"
	}
	window := head(body, 64<<10)
	for _, tag := range []string{"UNA", "UNB", "ISA"} {
		if k := bytes.Index(window[i:], []byte(tag)); k > 0 {
			return fmt.Sprintf("junk before the interchange header: expected UNA, UNB or ISA, found %s (%s at offset %d)", found, tag, i+k)
		}
	}
	return fmt.Sprintf("no interchange header: expected UNA, UNB or ISA, found %s", found)
}

// edifact reads the syntax identifier S001 of the UNB at unb, then scans.
// rep is the repetition separator that applies if the version is 4.
func (g *GuardResult) edifact(o *Options, unb int, rep byte) error {
	body, base, s := g.Body, g.Offset, g.Separators
	p := min(unb+4, len(body))
	id, p := token(body, p, &s)
	if id == "" {
		return &GuardError{Offset: base + int64(p), Code: CodeMissing, Msg: "UNB syntax identifier (S001/0001) is missing"}
	}
	if p >= len(body) || body[p] != s.Component {
		return &GuardError{Offset: base + int64(p), Code: CodeMissing,
			Msg: fmt.Sprintf("UNB syntax version (S001/0002) is missing after %s", quoted(id, 8))}
	}
	version, q := token(body, p+1, &s)
	if len(version) != 1 || version[0] < '1' || version[0] > '4' {
		return &GuardError{Offset: base + int64(p+1), Code: CodeSyntaxNotSupported,
			Msg: fmt.Sprintf("UNB syntax version %s is not 1..4", quoted(version, 8))}
	}
	_ = q
	g.Syntax, g.SyntaxVersion = id, version
	if version == "4" {
		g.Separators.Repetition = rep
	}
	cs := lookupCharset(id)
	if cs == nil {
		w := Warning{Offset: base + int64(unb+4), Code: CodeSyntaxNotSupported,
			Msg: fmt.Sprintf("syntax identifier %s is not in code list 0001", quoted(id, 8))}
		if !o.Lenient {
			return &GuardError{Offset: w.Offset, Code: w.Code, Msg: w.Msg}
		}
		g.Warnings = append(g.Warnings, w)
		cs = anyText
	}
	return g.scan(o, cs)
}

// token returns the bytes from p up to the next separator (release ignored:
// S001 never needs it) and the position of that separator.
func token(b []byte, p int, s *Separators) (string, int) {
	q := p
	for q < len(b) && q-p < 35 && b[q] != s.Component && b[q] != s.Element && b[q] != s.Segment {
		q++
	}
	return string(b[p:q]), q
}

// Byte classes of the scan table.
const (
	byteOK = iota
	byteRepertoire
	byteControl
)

// scan checks every byte of the body against cs plus the declared separators.
func (g *GuardResult) scan(o *Options, cs *charset) error {
	var tbl [256]uint8
	for b := 0; b < 256; b++ {
		switch {
		case cs.allowed[b]:
		case b < 0x20 || b == 0x7f:
			tbl[b] = byteControl
		default:
			tbl[b] = byteRepertoire
		}
	}
	allow := func(s *Separators) {
		for _, c := range []byte{s.Component, s.Element, s.Segment, s.Release, s.Repetition, '\r', '\n'} {
			if c != 0 {
				tbl[c] = byteOK
			}
		}
	}
	allow(&g.Separators)
	extraHeaders := false
	suppressed := 0
	err := g.chunks(func(body []byte, base int64) error {
		t := &tbl
		for i := 0; i < len(body); i++ {
			// Eight bytes per step while all are fine (byteOK is 0): one
			// OR of table lookups, no branch per byte.
			for ; i+8 <= len(body); i += 8 {
				w := body[i : i+8 : i+8]
				if t[w[0]]|t[w[1]]|t[w[2]]|t[w[3]]|t[w[4]]|t[w[5]]|t[w[6]]|t[w[7]] != byteOK {
					break
				}
			}
			if i >= len(body) {
				break
			}
			c := body[i]
			if t[c] == byteOK {
				continue
			}
			if !extraHeaders {
				// A later interchange may declare other separators (an X12
				// mailbag ends one with NAK and the next with LF): allow what
				// any header in the stream declares; the reader checks each
				// exactly.
				extraHeaders = true
				others, err := g.otherHeaders()
				if err != nil {
					return err
				}
				for _, s := range others {
					allow(&s)
				}
				if tbl[c] == byteOK {
					continue
				}
			}
			if tbl[c] == byteControl {
				return &GuardError{Offset: base + int64(i), Code: CodeInvalidCharacter,
					Msg: fmt.Sprintf("control character %s is not a declared separator", quoteByte(c))}
			}
			msg := fmt.Sprintf("byte %s is outside the %s repertoire (%s)", quoteByte(c), g.Syntax, cs.note)
			if !o.Lenient {
				return &GuardError{Offset: base + int64(i), Code: CodeInvalidCharacter, Msg: msg}
			}
			if len(g.Warnings) < maxWarnings {
				g.Warnings = append(g.Warnings, Warning{Offset: base + int64(i), Code: CodeInvalidCharacter, Msg: msg})
			} else {
				suppressed++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if cs.utf8 {
		off, c, bad, err := g.invalidUTF8()
		if err != nil {
			return err
		}
		if bad {
			msg := fmt.Sprintf("invalid UTF-8 under %s: byte %s", g.Syntax, quoteByte(c))
			if !o.Lenient {
				return &GuardError{Offset: off, Code: CodeInvalidCharacter, Msg: msg}
			}
			g.Warnings = append(g.Warnings, Warning{Offset: off, Code: CodeInvalidCharacter, Msg: msg})
		}
	}
	if suppressed > 0 {
		g.Warnings = append(g.Warnings, Warning{Offset: g.Warnings[len(g.Warnings)-1].Offset, Code: CodeInvalidCharacter,
			Msg: fmt.Sprintf("%d more bytes outside the %s repertoire", suppressed, g.Syntax)})
	}
	return nil
}

// headersIn returns the separators declared by every UNA or well-formed ISA
// starting in b[:n] (b may extend past n so that a header there is whole).
func headersIn(b []byte, n int) []Separators {
	var out []Separators
	for _, tag := range []string{"UNA", "ISA"} {
		for off := 0; ; {
			k := bytes.Index(b[off:], []byte(tag))
			if k < 0 || off+k >= n {
				break
			}
			at := off + k
			if tag == "UNA" {
				if s, rep, err := parseUNA(b[at:]); err == nil {
					s.Repetition = rep
					out = append(out, s)
				}
			} else if s, _, err := parseISA(b[at:]); err == nil {
				out = append(out, s)
			}
			off = at + 3
		}
	}
	return out
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return 0
}

func skipNewlines(b []byte, i int) int {
	for i < len(b) && (b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

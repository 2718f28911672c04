package edifact

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Byte classes of the tokenizer table; clsText must be zero so that the hot
// loop is a single table lookup per byte.
const (
	clsText = iota
	clsComp
	clsElem
	clsRep
	clsRel
	clsCtrl
	clsSeg // the segment terminator, in fcls only (fast.go)
)

const readerBufSize = 64 << 10 // must hold an ISA header (106 bytes) and a UNA

// A Reader reads segments from an EDIFACT or X12 stream, one at a time, like
// encoding/csv reads records. Separators come from UNA (or the defaults of the
// level the UNB uses) and from the fixed-width ISA, per interchange: a stream
// may hold several interchanges, each with its own separators.
//
// The Reader works in time linear in its input and holds at most one segment
// (MaxSegmentLen) plus a 64 KiB buffer, whatever the input. It checks syntax
// only: tags, separators, release characters, control characters, lengths.
// Envelope counts and references are checked by Parse.
//
// A carriage return or line feed is allowed only between segments; inside a
// segment (a hard-wrapped file) it is an error.
type Reader struct {
	// MaxSegmentLen caps one segment including its terminator, in bytes.
	MaxSegmentLen int
	// MaxElementLen caps one data element (all components and repetitions).
	MaxElementLen int
	// ReuseSegment lets Read return a *Segment whose slices alias buffers of
	// the Reader, valid only until the next call to Read (like
	// csv.Reader.ReuseRecord). The strings themselves are never reused.
	ReuseSegment bool
	// BaseOffset is added to every reported offset, for callers that pass a
	// suffix of their input (Parse passes the input without its BOM).
	BaseOffset int64

	br        *bufio.Reader
	off       int64 // offset of the next unread byte
	line      int
	lineStart int64 // offset of the first byte of the current line
	num       int   // segments returned so far

	std    string // EDIFACT or X12 once the first header was read
	endTag string // the interchange trailer of std: UNZ or IEA
	sep    Separators
	syntax string // syntax identifier of the current interchange
	cls    [256]uint8
	fcls   [256]uint8 // cls with the terminator as clsSeg (fast.go)
	fast   bool       // the separators allow the one-pass scan
	// win is a view of br's buffered bytes that the one-pass scan reads
	// from; its first winPos bytes are consumed but not yet discarded
	// from br (sync does that before any other use of br).
	win    []byte
	winPos int
	noFast bool // tests: always take the segment-by-segment path
	// keep, when set (a checker's Reader), receives the slices of every
	// segment Read returns, instead of the Reader's reused ones.
	keep       *keeper
	inside     bool // a header was read and its trailer not yet
	pendingUNB bool // the next segment is the UNB completing the header
	repIfV4    byte // repetition separator that applies if UNB says version 4

	segStart     int64 // where the segment being read starts
	segLine      int
	segLineStart int64

	raw   []byte // the segment being read when it spans buffer refills
	cur   []byte // the bytes of the segment being read, for error positions
	arena []byte // string arena, see arena.go
	// arenaHint is the input's size when known (a checker's Reader), for
	// the first arena block.
	arenaHint int

	// The tokenized segment, valid until the next read: components are
	// text[span] (text is the body itself unless it held release
	// characters), elemOcc indexes the first occurrence of each element.
	text    []byte
	spans   []span
	seps    []int32 // a scanned segment (fast.go): separator positions,
	ends    []int32 // components up to the end of each element,
	scanned bool    // and whether the segment is in this form
	occs    []occ
	elemOcc []int32
	unrel   []byte // scratch for a text without release characters (never the body, which may be br's buffer)
	bin     []byte // X12 BIN data, an element of its own
	segAt   int64  // where the tokenized segment starts
	comps   []string
	elems   [][]string
	// wantStrings is set by Read (tokenizeStrings fills out), cleared by
	// ReadRaw (tokenizeSpans fills text, spans, occs and elemOcc).
	wantStrings bool
	out         *Segment
	seg         Segment
	raw1        RawSegment
	err         error
}

// NewReader returns a Reader with the default limits.
func NewReader(r io.Reader) *Reader {
	return newReaderSize(r, readerBufSize)
}

func newReaderSize(r io.Reader, size int) *Reader {
	return &Reader{
		MaxSegmentLen: DefaultMaxSegmentLen,
		MaxElementLen: DefaultMaxElementLen,
		br:            bufio.NewReaderSize(r, size),
		line:          1,
	}
}

// newReaderOptions applies Options (already defaulted) to a new Reader over
// n bytes; small inputs get a small buffer.
func newReaderOptions(r io.Reader, n int, o *Options) *Reader {
	size := readerBufSize
	if n+1 < size {
		size = max(n+1, 256) // Peek needs room for an ISA header
	}
	rd := newReaderSize(r, size)
	rd.MaxSegmentLen, rd.MaxElementLen = o.MaxSegmentLen, o.MaxElementLen
	return rd
}

// Reset discards the Reader's state and makes it read from src, keeping its
// buffers and settings: a hub worker can reuse one Reader for every message.
func (r *Reader) Reset(src io.Reader) {
	r.win, r.winPos = nil, 0
	r.br.Reset(src)
	r.off, r.line, r.lineStart, r.num = 0, 1, 0, 0
	r.std, r.sep, r.syntax, r.endTag = "", Separators{}, "", ""
	r.inside, r.pendingUNB, r.repIfV4 = false, false, 0
	r.err = nil
}

// Standard is EDIFACT or X12 after the first header, "" before.
func (r *Reader) Standard() string { return r.std }

// Separators returns the separators of the interchange being read.
func (r *Reader) Separators() Separators { return r.sep }

// InputOffset returns the offset just after the last segment read.
func (r *Reader) InputOffset() int64 { return r.BaseOffset + r.off }

// Read returns the next segment. At the end of the input it returns io.EOF;
// any other error is a *ParseError (or an I/O error of the underlying reader)
// and is returned again by every later call.
func (r *Reader) Read() (*Segment, error) {
	// The common case first, without the calls of next and read.
	if r.scanning() {
		if n, ok := r.scanSegment(r.win[r.winPos:]); ok {
			r.winPos += n
			r.num++
			seg, err := r.stringsFromSpans()
			seg.Number = r.num
			return seg, err
		}
	}
	r.wantStrings = true
	if err := r.next(); err != nil {
		return nil, err
	}
	seg := r.out
	if r.bin != nil { // X12 BIN data: one element of its own
		seg.Elements = append(seg.Elements, []string{string(r.bin)})
	}
	seg.Number = r.num
	return seg, nil
}

// next reads and tokenizes the next segment, or fails for good.
func (r *Reader) next() error {
	if r.err != nil {
		return r.err
	}
	if err := r.read(); err != nil {
		r.err = err
		return err
	}
	r.num++
	return nil
}

func (r *Reader) read() error {
	if r.inside && r.fast && !r.noFast {
		if ok, err := r.fastSegment(); ok {
			return err
		}
	}
	r.sync()
	if !r.inside {
		if r.off == 0 && r.num == 0 {
			// A UTF-8 BOM at the very start (Guard strips it too, but the
			// Reader may be used on its own).
			if p, _ := r.br.Peek(3); bytes.Equal(p, bomUTF8) {
				r.br.Discard(3)
				r.off, r.lineStart = 3, 3
			}
		}
		if err := r.skipNewlines(); err != nil {
			return err
		}
		r.mark()
		isa, err := r.header()
		if err != nil {
			return err
		}
		if isa {
			return r.isa()
		}
	}
	return r.segment()
}

// skipNewlines consumes CR and LF between segments; io.EOF if nothing follows.
func (r *Reader) skipNewlines() error {
	for {
		b, err := r.br.ReadByte()
		if err != nil {
			return r.ioErr(err)
		}
		switch b {
		case '\n':
			r.off++
			r.line++
			r.lineStart = r.off
		case '\r':
			r.off++
		default:
			return r.br.UnreadByte()
		}
	}
}

func (r *Reader) ioErr(err error) error {
	if err == io.EOF {
		return io.EOF
	}
	return fmt.Errorf("edifact: reading input at offset %d: %w", r.BaseOffset+r.off, err)
}

// header reads UNA (if any) and prepares the separators for the UNB, or reads
// an ISA's separators; isa tells the caller to read the ISA segment next.
func (r *Reader) header() (isa bool, err error) {
	p, _ := r.br.Peek(3)
	switch string(p) {
	case "UNA":
		if r.std == X12 {
			return false, r.errAt(r.off, "UNA", CodeNotSupportedPosition, errors.New("EDIFACT interchange after X12 in one stream"))
		}
		p, _ = r.br.Peek(unaLen)
		s, rep, serr := parseUNA(p)
		if serr != nil {
			code := CodeInvalidServiceChar
			if len(p) < unaLen {
				code = CodeMissing
			}
			return false, r.errAt(r.off+int64(serr.pos), "UNA", code, serr)
		}
		r.advance(p)
		if _, err := r.br.Discard(unaLen); err != nil {
			return false, r.ioErr(err)
		}
		if err := r.skipNewlines(); err != nil && err != io.EOF {
			return false, err
		}
		r.mark()
		if q, _ := r.br.Peek(3); string(q) != "UNB" {
			return false, r.errAt(r.off, "UNB", CodeMissing, fmt.Errorf("UNA is not followed by UNB (found %s)", quoted(string(q), 3)))
		}
		r.sep, r.repIfV4 = s, rep
	case "UNB":
		if r.std == X12 {
			return false, r.errAt(r.off, "UNB", CodeNotSupportedPosition, errors.New("EDIFACT interchange after X12 in one stream"))
		}
		p, _ = r.br.Peek(4)
		if len(p) < 4 {
			return false, r.errAt(r.off+int64(len(p)), "UNB", CodeMissing, errors.New("input ends inside UNB"))
		}
		switch p[3] {
		case defaultsA.Element:
			r.sep, r.repIfV4 = defaultsA, defaultRepetitionA
		case defaultsB.Element:
			r.sep, r.repIfV4 = defaultsB, defaultRepetitionB
		default:
			return false, r.errAt(r.off+3, "UNB", CodeInvalidServiceChar,
				fmt.Errorf("UNB is followed by %s; without UNA it must be '+' or 0x1D", quoteByte(p[3])))
		}
	case "ISA":
		if r.std == EDIFACT {
			return false, r.errAt(r.off, "ISA", CodeNotSupportedPosition, errors.New("X12 interchange after EDIFACT in one stream"))
		}
		p, _ = r.br.Peek(isaLen)
		s, _, serr := parseISA(p)
		if serr != nil {
			return false, r.errAt(r.off+int64(serr.pos), "ISA", CodeInvalidServiceChar, serr)
		}
		r.std, r.sep, r.inside, r.syntax, r.endTag = X12, s, true, X12, "IEA"
		r.setClasses()
		return true, nil
	default:
		return false, r.errAt(r.off, "", CodeMissing,
			fmt.Errorf("expected an interchange header (UNA, UNB or ISA), found %s", quoted(string(p), 3)))
	}
	r.std, r.inside, r.pendingUNB, r.syntax, r.endTag = EDIFACT, true, true, "", "UNZ"
	r.setClasses()
	return false, nil
}

// baseClasses is the tokenizer table before separators: control characters
// (below 0x20 and DEL) apart, every byte is text. setClasses starts from a
// copy, which costs less than a loop over the 256 entries per header.
var baseClasses = func() (t [256]uint8) {
	for b := range t {
		if b < 0x20 || b == 0x7f {
			t[b] = clsCtrl
		}
	}
	return t
}()

// setClasses fills the tokenizer tables from the current separators: cls
// for the tokenizers of a segment already cut (the terminator only reaches
// them released, as text), fcls for the one-pass scan of fast.go (the
// terminator ends the segment).
func (r *Reader) setClasses() {
	r.cls = baseClasses
	if r.syntax == "UNOX" { // ISO 2022 escape sequences are text there
		r.cls[0x1B], r.cls[0x0E], r.cls[0x0F] = clsText, clsText, clsText
	}
	s := r.sep
	r.cls[s.Segment] = clsText // only reaches the tokenizer released
	r.cls[s.Component] = clsComp
	r.cls[s.Element] = clsElem
	if s.Repetition != 0 {
		r.cls[s.Repetition] = clsRep
	}
	if s.Release != 0 {
		r.cls[s.Release] = clsRel
	}
	r.fcls = r.cls
	r.fast = fastSeparators(s)
	if r.fast {
		r.fcls[s.Segment] = clsSeg
	}
}

// isa reads the 106-byte ISA header: split on the element separator only,
// because ISA16 *is* the component separator.
func (r *Reader) isa() error {
	start := r.off
	p, err := r.br.Peek(isaLen)
	if err != nil {
		return r.ioErr(err)
	}
	r.raw = append(r.raw[:0], p...)
	r.advance(p)
	if _, err := r.br.Discard(isaLen); err != nil {
		return r.ioErr(err)
	}
	var cls [256]uint8
	for b := range cls {
		if b < 0x20 || b == 0x7f {
			cls[b] = clsCtrl
		}
	}
	cls[r.sep.Element] = clsElem
	cls[r.sep.Component] = clsText
	return r.tokenize(r.raw[:isaLen-1], &cls, start)
}

// segment reads up to the next unreleased terminator and tokenizes it. The
// CR and LF that follow the previous terminator are skipped here, in the same
// scan, rather than byte by byte.
func (r *Reader) segment() error {
	term, rel := r.sep.Segment, r.sep.Release
	max := r.MaxSegmentLen
	r.mark()
	var seg []byte // the segment with its terminator: a view of br's buffer or r.raw
	for {
		chunk, err := r.br.ReadSlice(term)
		if len(r.raw) == 0 {
			k := 0
			for k < len(chunk) && (chunk[k] == '\n' || chunk[k] == '\r') {
				if chunk[k] == '\n' {
					r.line++
					r.lineStart = r.off + int64(k) + 1
				}
				k++
			}
			if k > 0 {
				r.off += int64(k)
				chunk = chunk[k:]
				r.mark()
			}
			if len(chunk) == 0 {
				if err == nil || err == bufio.ErrBufferFull {
					continue
				}
				return r.ioErr(err)
			}
		}
		if max > 0 && len(r.raw)+len(chunk) > max {
			r.raw = append(r.raw, chunk[:max-len(r.raw)]...)
			r.cur = r.raw
			return r.errAt(r.segStart+int64(max), tagOf(r.raw, &r.cls), CodeTooLong,
				fmt.Errorf("segment is longer than %d bytes", max))
		}
		if err == nil && len(r.raw) == 0 && !released(chunk, rel) {
			seg = chunk // the common case: no copy
			break
		}
		r.raw = append(r.raw, chunk...)
		if err == nil {
			if released(r.raw, rel) {
				continue
			}
			seg = r.raw
			break
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		r.cur = r.raw
		if err == io.EOF {
			if string(r.raw[:min(3, len(r.raw))]) == "UNA" && r.std == EDIFACT {
				return r.errAt(r.segStart, "UNA", CodeMissing, errors.New("UNA inside an interchange: UNZ is missing before it"))
			}
			return r.errAt(r.segStart, tagOf(r.raw, &r.cls), CodeMissing,
				fmt.Errorf("segment is not terminated: input ends %d bytes after its start without %s", len(r.raw), quoteByte(term)))
		}
		return r.ioErr(err)
	}
	start := r.segStart
	r.cur = seg
	if r.std == EDIFACT && len(seg) >= 3 && string(seg[:3]) == "UNA" {
		return r.errAt(start, "UNA", CodeMissing, errors.New("UNA inside an interchange: UNZ is missing before it"))
	}
	if r.std == X12 && len(seg) > 4 && string(seg[:3]) == "BIN" && seg[3] == r.sep.Element {
		if len(r.raw) == 0 {
			r.raw = append(r.raw, seg...)
		}
		data, err := r.binary(start)
		if err != nil {
			return err
		}
		r.advance(r.raw)
		if err := r.tokenize(r.raw[:data-1], &r.cls, start); err != nil {
			return err
		}
		r.bin = r.raw[data : len(r.raw)-1]
		return nil
	}
	// A line break inside the segment is refused by the tokenizer, so lines
	// only advance here when the terminator itself is a line feed.
	r.off += int64(len(seg))
	if term == '\n' {
		r.line++
		r.lineStart = r.off
	}
	body := seg[:len(seg)-1]
	if term == '\n' && len(body) > 0 && body[len(body)-1] == '\r' {
		body = body[:len(body)-1]
	}
	return r.tokenize(body, &r.cls, start)
}

// released reports whether the terminator at the end of b is preceded by an
// odd run of release characters, i.e. is data. Each byte is looked at once:
// a run ends at the terminator it precedes.
func released(b []byte, rel byte) bool {
	if rel == 0 {
		return false
	}
	n := 0
	for k := len(b) - 2; k >= 0 && b[k] == rel; k-- {
		n++
	}
	return n%2 == 1
}

// binary completes an X12 BIN segment, whose second element is BIN01 bytes of
// arbitrary data that may contain the terminator or line feeds.
func (r *Reader) binary(start int64) (data int, err error) {
	p := 4
	q := p
	for q < len(r.raw) && q-p < 15 && r.raw[q] >= '0' && r.raw[q] <= '9' {
		q++
	}
	n, aerr := strconv.Atoi(string(r.raw[p:q]))
	if aerr != nil || q >= len(r.raw) || r.raw[q] != r.sep.Element {
		return 0, r.errAt(start+int64(q), "BIN", CodeInvalidValue, errors.New("BIN01 is not a length followed by the data"))
	}
	need := q + 1 + n + 1 // data and terminator
	if r.MaxSegmentLen > 0 && need > r.MaxSegmentLen {
		return 0, r.errAt(start+int64(p), "BIN", CodeTooLong, fmt.Errorf("BIN segment of %d bytes is longer than %d", need, r.MaxSegmentLen))
	}
	if len(r.raw) < need {
		have := len(r.raw)
		r.raw = append(r.raw, make([]byte, need-have)...)
		if _, err := io.ReadFull(r.br, r.raw[have:]); err != nil {
			return 0, r.errAt(start, "BIN", CodeMissing, fmt.Errorf("input ends inside BIN data of %d bytes", n))
		}
	}
	if len(r.raw) != need || r.raw[need-1] != r.sep.Segment {
		return 0, r.errAt(start+int64(need-1), "BIN", CodeInvalidValue, fmt.Errorf("BIN data is not %d bytes followed by the terminator", n))
	}
	// The data becomes one element of its own, outside the tokenizer: it may
	// hold separators and control characters.
	return q + 1, nil
}

// advance moves the position past b, counting lines.
func (r *Reader) advance(b []byte) {
	if n := bytes.Count(b, []byte{'\n'}); n > 0 {
		r.line += n
		r.lineStart = r.off + int64(bytes.LastIndexByte(b, '\n')) + 1
	}
	r.off += int64(len(b))
}

// tagOf guesses the tag of an incomplete segment for error messages.
func tagOf(b []byte, cls *[256]uint8) string {
	i := 0
	for i < len(b) && i < 3 && cls[b[i]] == clsText {
		i++
	}
	return string(b[:i])
}

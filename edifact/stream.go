package edifact

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"
)

// chunkSize is how much of a ReaderAt input the guard scans hold at once (a
// variable so that tests can cut inputs at every position).
var chunkSize int64 = 1 << 20

// headWindow is how much of the start of a ReaderAt input Guard reads to
// find the header and explain junk before it (as junkMessage looks 64 KiB).
const headWindow = 64<<10 + isaLen

// chunks calls fn on the body in order: at once when it is in memory, else
// in chunks read from src, each with its offset in the input.
func (g *GuardResult) chunks(fn func(b []byte, base int64) error) error {
	if g.src == nil {
		return fn(g.Body, g.Offset)
	}
	buf := make([]byte, min(chunkSize, g.end-g.Offset))
	for p := g.Offset; p < g.end; {
		b, err := g.readAt(buf[:min(int64(len(buf)), g.end-p)], p)
		if err != nil {
			return err
		}
		if err := fn(b, p); err != nil {
			return err
		}
		p += int64(len(b))
	}
	return nil
}

func (g *GuardResult) readAt(b []byte, off int64) ([]byte, error) {
	n, err := g.src.ReadAt(b, off)
	if n == len(b) {
		return b, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF // the input shrank while being read
	}
	return nil, fmt.Errorf("edifact: reading input at offset %d: %w", off+int64(n), err)
}

// otherHeaders returns the separators declared by every UNA or ISA of the
// body. Windows overlap by an ISA's length so that no header is cut.
func (g *GuardResult) otherHeaders() ([]Separators, error) {
	if g.src == nil {
		return headersIn(g.Body, len(g.Body)), nil
	}
	var out []Separators
	buf := make([]byte, min(chunkSize+isaLen, g.end-g.Offset))
	for p := g.Offset; p < g.end; p += chunkSize {
		b, err := g.readAt(buf[:min(int64(len(buf)), g.end-p)], p)
		if err != nil {
			return nil, err
		}
		out = append(out, headersIn(b, int(min(chunkSize, int64(len(b)))))...)
	}
	return out, nil
}

// invalidUTF8 finds the first byte that is not valid UTF-8. In chunks, a
// character cut at the end of one is read again at the start of the next.
func (g *GuardResult) invalidUTF8() (off int64, c byte, bad bool, err error) {
	if g.src == nil {
		if utf8.Valid(g.Body) {
			return 0, 0, false, nil
		}
		i := firstInvalidUTF8(g.Body)
		return g.Offset + int64(i), g.Body[i], true, nil
	}
	// At least two characters per read, so that every read makes progress.
	buf := make([]byte, min(max(chunkSize, 2*utf8.UTFMax), g.end-g.Offset))
	for p := g.Offset; p < g.end; {
		b, err := g.readAt(buf[:min(int64(len(buf)), g.end-p)], p)
		if err != nil {
			return 0, 0, false, err
		}
		cut := len(b)
		if p+int64(len(b)) < g.end {
			for k := len(b) - 1; k >= 0 && k >= len(b)-utf8.UTFMax; k-- {
				if utf8.RuneStart(b[k]) {
					if !utf8.FullRune(b[k:]) {
						cut = k
					}
					break
				}
			}
		}
		if !utf8.Valid(b[:cut]) {
			i := firstInvalidUTF8(b[:cut])
			return p + int64(i), b[i], true, nil
		}
		p += int64(cut)
	}
	return 0, 0, false, nil
}

// GuardReaderAt is Guard over size bytes read from ra, holding at most a
// chunk (1 MiB) and the head of the input: the result's Body is that head,
// not the whole body. Results and errors are those of Guard on the same
// bytes, except that I/O errors are returned as such (not schema errors).
func GuardReaderAt(ra io.ReaderAt, size int64, opts *Options) (*GuardResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, &GuardError{Code: CodeUnspecified, Msg: err.Error()}
	}
	o := opts.setDefaults()
	if size > o.MaxSize {
		return nil, &GuardError{Offset: o.MaxSize, Code: CodeUnspecified,
			Msg: fmt.Sprintf("input is %d bytes, over the limit of %d", size, o.MaxSize)}
	}
	g := &GuardResult{src: ra, end: size}
	first, err := g.readAt(make([]byte, min(3, size)), 0)
	if err != nil {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(first, bomUTF8):
		g.Offset = int64(len(bomUTF8))
	case bytes.HasPrefix(first, bomUTF16BE), bytes.HasPrefix(first, bomUTF16LE):
		return nil, &GuardError{Code: CodeSyntaxNotSupported, Msg: "input is UTF-16 (byte order mark); EDI must be sent in 8-bit bytes"}
	}
	if err := g.trimPadding(); err != nil {
		return nil, err
	}
	// The head starts after any CR/LF run, so that header() sees the header.
	lead, err := g.leadingNewlines()
	if err != nil {
		return nil, err
	}
	head, err := g.readAt(make([]byte, min(lead+headWindow, g.end-g.Offset)), g.Offset)
	if err != nil {
		return nil, err
	}
	g.Body = head
	if err := g.header(&o); err != nil {
		return nil, err
	}
	return g, nil
}

// trimPadding moves end before trailing NUL and Ctrl-Z bytes.
func (g *GuardResult) trimPadding() error {
	buf := make([]byte, min(4<<10, g.end-g.Offset))
	for g.end > g.Offset {
		n := min(int64(len(buf)), g.end-g.Offset)
		b, err := g.readAt(buf[:n], g.end-n)
		if err != nil {
			return err
		}
		k := len(b)
		for k > 0 && (b[k-1] == 0x00 || b[k-1] == 0x1A) {
			k--
		}
		g.end -= int64(len(b) - k)
		if k > 0 {
			return nil
		}
	}
	return nil
}

// leadingNewlines counts the CR and LF bytes at the start of the body.
func (g *GuardResult) leadingNewlines() (int64, error) {
	var n int64
	err := g.chunks(func(b []byte, _ int64) error {
		k := skipNewlines(b, 0)
		n += int64(k)
		if k < len(b) {
			return io.EOF // found the first other byte
		}
		return nil
	})
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// WalkReaderAt is Walk over size bytes read from ra (an *os.File, say), two
// passes: GuardReaderAt, then the Reader over the body. Memory is bounded by
// the largest message plus the message headers the Document keeps; the
// input is never held whole.
func WalkReaderAt(ra io.ReaderAt, size int64, opts *Options, fn func(*Message) error) (*Document, error) {
	if fn == nil {
		fn = func(*Message) error { return nil }
	}
	doc, _, err := walkAt(ra, size, opts, fn, false)
	return doc, err
}

// Summary is what Check reports of a valid input.
type Summary struct {
	Standard     string
	Interchanges int
	Messages     int
	Segments     int
	Warnings     []Warning
}

// Check runs the checks of Parse over size bytes read from ra but keeps no
// message, only counts: its memory is bounded by the largest message (plus
// the references of the open interchange, for the duplicate check), however
// many messages the input holds. Errors are those of Parse on the same bytes.
func Check(ra io.ReaderAt, size int64, opts *Options) (*Summary, error) {
	doc, c, err := walkAt(ra, size, opts, func(*Message) error { return nil }, true)
	if err != nil {
		return nil, err
	}
	return &Summary{Standard: doc.Standard, Interchanges: len(doc.Interchanges),
		Messages: c.nmsgs, Segments: doc.Segments, Warnings: doc.Warnings}, nil
}

// walkAt guards ra and runs the checker over its body; counting drops the
// message headers (Check).
func walkAt(ra io.ReaderAt, size int64, opts *Options, fn func(*Message) error, counting bool) (*Document, *checker, error) {
	g, err := GuardReaderAt(ra, size, opts)
	if err != nil {
		return nil, nil, err
	}
	o := opts.setDefaults()
	c := newChecker(g.Standard)
	c.onMessage, c.counting = fn, counting
	doc, err := c.run(g, io.NewSectionReader(ra, g.Offset, g.end-g.Offset), &o)
	return doc, c, err
}

package edifact

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const hdr = "UNA:+.? 'UNB+UNOA:3+S+R+240101:1200+1'UNH+1+INVOIC:D:96A:UN'"

// wantParseErr asserts a *ParseError with the given code and returns it.
func wantParseErr(t *testing.T, err error, code int, size int) *ParseError {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("want *ParseError code %d, got %T: %v", code, err, err)
	}
	if pe.Code != code {
		t.Fatalf("code = %d, want %d: %v", pe.Code, code, err)
	}
	checkErrorContract(t, err, size)
	return pe
}

func wantGuardErr(t *testing.T, err error, code int, off int64) *GuardError {
	t.Helper()
	var ge *GuardError
	if !errors.As(err, &ge) {
		t.Fatalf("want *GuardError code %d, got %T: %v", code, err, err)
	}
	if ge.Code != code || ge.Offset != off {
		t.Fatalf("got code %d offset %d, want code %d offset %d: %v", ge.Code, ge.Offset, code, off, err)
	}
	return ge
}

func TestHundredThousandLines(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	data := genINVOIC(n)
	start := time.Now()
	doc, err := Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(doc.Messages()); got != 1 {
		t.Fatalf("messages = %d", got)
	}
	if doc.Segments != invoicSegments(n) {
		t.Fatalf("segments = %d, want %d", doc.Segments, invoicSegments(n))
	}
	if got := doc.Messages()[0].Segments; len(got) != invoicSegments(n)-2 || got[len(got)-1].Tag != "UNT" {
		t.Fatalf("message has %d segments", len(got))
	}
	t.Logf("%d bytes, %d segments in %v", len(data), doc.Segments, time.Since(start))
}

// A 10 MB single segment is refused at the segment cap, after reading only
// the cap: the reader never buffers the rest.
func TestTenMegabyteSegment(t *testing.T) {
	big := hdr + "FTX+AAI+++" + strings.Repeat("A", 10_000_000) + "'UNT+3+1'UNZ+1+1'"
	start := time.Now()
	_, err := Parse([]byte(big), &Options{MaxSize: 20 << 20})
	pe := wantParseErr(t, err, CodeTooLong, len(big))
	if want := int64(strings.Index(big, "FTX") + DefaultMaxSegmentLen); pe.Offset != want || pe.Tag != "FTX" || pe.Segment != 3 {
		t.Errorf("offset %d tag %q segment %d, want offset %d FTX 3: %v", pe.Offset, pe.Tag, pe.Segment, want, err)
	}
	// Not a speed test: reading all 10 MB byte by byte before refusing
	// would still pass a bound this loose, but not a quadratic scan.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
	// Through the streaming Reader the input is never in memory at all.
	src := io.MultiReader(strings.NewReader(hdr+"FTX+"), neverEnding('A'))
	r := NewReader(src)
	for {
		if _, err = r.Read(); err != nil {
			break
		}
	}
	wantParseErr(t, err, CodeTooLong, 1<<62)
	// And the default MaxSize refuses the whole input before reading it.
	_, err = Parse(make([]byte, DefaultMaxSize+1), nil)
	wantGuardErr(t, err, CodeUnspecified, DefaultMaxSize)
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// Runs of release characters: linear time, no quadratic rescans.
func TestReleaseRuns(t *testing.T) {
	run := strings.Repeat("?", 1<<20)
	cases := []struct {
		name, in string
		code     int // 0 = success
	}{
		// 2^20 '?' = 2^19 released '?': too long for one element.
		{"even run", hdr + "FTX+" + run + "'UNT+3+1'UNZ+1+1'", CodeTooLong},
		// An odd run releases the terminator: the segment never ends.
		// An odd run releases the terminator: the segment runs on into UNT.
		{"odd run", hdr + "FTX+?" + run + "'UNT+3+1'UNZ+1+1'", CodeTooLong},
		{"run at EOF", hdr + "FTX+" + run, CodeMissing},
		{"? at EOF", hdr + "FTX+A?", CodeMissing},
		{"?@ is tolerated", hdr + "FTX+A?@B'UNT+3+1'UNZ+1+1'", 0},
		{"?? then terminator", hdr + "FTX+A??'UNT+3+1'UNZ+1+1'", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			doc, err := Parse([]byte(c.in), &Options{MaxSize: 4 << 20, MaxSegmentLen: 2 << 20, Lenient: true})
			if c.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				ftx := doc.Messages()[0].Segments[1]
				if got := ftx.Value(1, 1); got != "A@B" && got != "A?" {
					t.Errorf("FTX value %q", got)
				}
			} else {
				wantParseErr(t, err, c.code, len(c.in))
			}
			// Not a speed test (the benchmarks measure speed): a quadratic
			// scan of a 1 MiB release run would take hours, so a bound far
			// above any machine's noise still catches it.
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v: the scan is not linear", d)
			}
		})
	}
}

func TestUNOWInvalidUTF8(t *testing.T) {
	in := []byte("UNB+UNOW:4+S+R+20240101:1200+1'UNH+1+INVOIC:D:01B:UN'FTX+AAI+++M\xfcller'UNT+3+1'UNZ+1+1'")
	_, err := Parse(in, nil)
	ge := wantGuardErr(t, err, CodeInvalidCharacter, int64(bytes.IndexByte(in, 0xfc)))
	if !strings.Contains(ge.Error(), "0xFC") {
		t.Errorf("message does not name the byte: %v", ge)
	}
	doc, err := Parse(in, &Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Warnings) != 1 || doc.Warnings[0].Code != CodeInvalidCharacter {
		t.Errorf("warnings %v", doc.Warnings)
	}
}

// Every prefix of a valid interchange gives a result or a positioned error.
func TestTruncatedEverywhere(t *testing.T) {
	for _, f := range []string{"orders_una_release.edi", "x12_850.edi", "unob_is_separators.edi", "paxlst_v4_repetition.edi"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		full := len(bytes.TrimRight(data, "\r\n"))
		for i := 0; i <= len(data); i++ {
			doc, err := Parse(data[:i], nil)
			switch {
			case err != nil:
				checkErrorContract(t, err, i)
			case i < full:
				t.Fatalf("%s cut at %d parsed without error (%d interchanges)", f, i, len(doc.Interchanges))
			}
		}
	}
}

func TestGuardHeaders(t *testing.T) {
	cases := []struct {
		name string
		in   string
		code int
		off  int64
	}{
		{"identical separators", "UNA::.? 'UNB:UNOA:3'", CodeInvalidServiceChar, 4},
		{"terminator equals release", "UNA:+.? ?UNB+UNOA:3?", CodeInvalidServiceChar, 8},
		{"letter as separator", "UNAX+.? 'UNB+UNOA:3'", CodeInvalidServiceChar, 3},
		{"UNA shorter than 9", "UNA:+.", CodeMissing, 6},
		{"junk before UNB", "hello\nUNB+UNOA:3+S+R+240101:1200+1'", CodeMissing, 0},
		{"empty", "\r\n", CodeMissing, 2},
		{"UTF-16", "\xff\xfeU\x00N\x00B\x00", CodeSyntaxNotSupported, 0},
		{"unknown syntax id", "UNB+ABCD:3+S+R+240101:1200+1'", CodeSyntaxNotSupported, 4},
		{"bad version", "UNB+UNOA:7+S+R+240101:1200+1'", CodeSyntaxNotSupported, 9},
		{"no default separator", "UNB*UNOA:3*S'", CodeInvalidServiceChar, 3},
		{"escape character", "UNB+UNOA:3+S+R+240101:1200+1'UNH+1+X:D:96A:UN'FTX+\x1b[31m'", CodeInvalidCharacter, 50},
		{"lowercase under UNOA", "UNB+UNOA:3+s+R+240101:1200+1'", CodeInvalidCharacter, 11},
		{"ISA too short", "ISA*00*", CodeMissing, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Guard([]byte(c.in), nil)
			wantGuardErr(t, err, c.code, c.off)
			checkErrorContract(t, err, len(c.in))
		})
	}
}

func TestGuardStripsAndWarns(t *testing.T) {
	in := []byte("\xef\xbb\xbfUNB+UNOA:3+sender+R+240101:1200+1'UNH+1+X:D:96A:UN'UNT+2+1'UNZ+1+1'\r\n\x1a\x00\x00")
	g, err := Guard(in, &Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if g.Offset != 3 || !bytes.HasPrefix(g.Body, []byte("UNB")) || !bytes.HasSuffix(g.Body, []byte("'\r\n")) {
		t.Errorf("offset %d body %q", g.Offset, g.Body)
	}
	if &g.Body[0] != &in[3] {
		t.Error("Body is a copy")
	}
	if g.Standard != EDIFACT || g.Syntax != "UNOA" || g.SyntaxVersion != "3" {
		t.Errorf("got %s %s %s", g.Standard, g.Syntax, g.SyntaxVersion)
	}
	if len(g.Warnings) != 6 || g.Warnings[0].Offset != 14 {
		t.Errorf("warnings %v", g.Warnings)
	}
	many := append([]byte("UNB+UNOA:3+"), bytes.Repeat([]byte("x"), 1000)...)
	g, err = Guard(append(many, "+R+240101:1200+1'"...), &Options{Lenient: true})
	if err != nil || len(g.Warnings) != maxWarnings+1 || !strings.Contains(g.Warnings[maxWarnings].Msg, "990 more") {
		t.Errorf("err %v warnings %d %v", err, len(g.Warnings), g.Warnings)
	}
}

func TestEnvelopeErrors(t *testing.T) {
	const unb = "UNB+UNOA:3+S+R+240101:1200+IC1'"
	cases := []struct {
		name, in string
		code     int
		seg      int
		tag      string
	}{
		{"UNT count", unb + "UNH+1+X:D:96A:UN'BGM+1'UNT+9+1'UNZ+1+IC1'", CodeCountMismatch, 4, "UNT"},
		{"UNT ref", unb + "UNH+1+X:D:96A:UN'UNT+2+2'UNZ+1+IC1'", CodeReferenceMismatch, 3, "UNT"},
		{"UNT count not a number", unb + "UNH+1+X:D:96A:UN'UNT+2A+1'UNZ+1+IC1'", CodeInvalidValue, 3, "UNT"},
		{"UNZ count", unb + "UNH+1+X:D:96A:UN'UNT+2+1'UNZ+2+IC1'", CodeCountMismatch, 4, "UNZ"},
		{"UNZ ref", unb + "UNH+1+X:D:96A:UN'UNT+2+1'UNZ+1+IC2'", CodeReferenceMismatch, 4, "UNZ"},
		{"UNH inside message", unb + "UNH+1+X:D:96A:UN'UNH+2+X:D:96A:UN'", CodeMissing, 3, "UNH"},
		{"UNB inside message", unb + "UNH+1+X:D:96A:UN'UNB+UNOA:3+S+R+1:1+2'", CodeNotSupportedPosition, 3, "UNB"},
		{"cut off inside message", unb + "UNH+1+X:D:96A:UN'BGM+1'", CodeMissing, 0, "UNT"},
		{"cut off inside group", unb + "UNG+X+S+R+1:1+G1+UN+D:96A'UNH+1+X:D:96A:UN'UNT+2+1'", CodeMissing, 0, "UNE"},
		{"UNZ missing at EOF", unb + "UNH+1+X:D:96A:UN'UNT+2+1'", CodeMissing, 0, "UNZ"},
		{"segment outside message", unb + "BGM+1'UNZ+0+IC1'", CodeOutsideEnvelope, 2, "BGM"},
		{"UNT without UNH", unb + "UNT+2+1'", CodeNotSupportedPosition, 2, "UNT"},
		{"UNE without UNG", unb + "UNE+1+G1'", CodeNotSupportedPosition, 2, "UNE"},
		{"empty interchange", unb + "UNZ+0+IC1'", CodeLowerLevelEmpty, 2, "UNZ"},
		{"groups and messages mixed", unb + "UNH+1+X:D:96A:UN'UNT+2+1'UNG+X+S+R+1:1+G1+UN+D:96A'", CodeGroupsMessagesMixed, 4, "UNG"},
		{"UNE count", unb + "UNG+X+S+R+1:1+G1+UN+D:96A'UNH+1+X:D:96A:UN'UNT+2+1'UNE+2+G1'", CodeCountMismatch, 5, "UNE"},
		{"duplicate message ref", unb + "UNH+1+X:D:96A:UN'UNT+2+1'UNH+1+X:D:96A:UN'", CodeDuplicate, 4, "UNH"},
		{"UNH type missing", unb + "UNH+1'UNT+2+1'", CodeMissing, 2, "UNH"},
		{"too many elements in UNT", unb + "UNH+1+X:D:96A:UN'UNT+2+1+X'", CodeTooManyConstituents, 3, "UNT"},
		{"repetition in UNH", "UNB+UNOA:4+S+R+240101:1200+IC1'UNH+1+X:D:96A:UN*Y'", CodeTooManyRepetitions, 2, "UNH"},
		{"bad tag", unb + "UNH+1+X:D:96A:UN'bgm+1'", CodeInvalidValue, 3, "bgm"},
		{"empty segment", unb + "UNH+1+X:D:96A:UN''", CodeInvalidValue, 3, ""},
		{"tag with component", unb + "UNH+1+X:D:96A:UN'BGM:1+1'", CodeTooManyConstituents, 3, "BGM"},
		{"UNA inside interchange", unb + "UNA:+.? 'UNB+UNOA:3+S+R+240101:1200+IC2'", CodeMissing, 2, "UNA"},
		{"line break inside segment", unb + "UNH+1+X:D:96A:UN'FTX+A\nB'", CodeInvalidCharacter, 3, "FTX"},
		{"X12 after EDIFACT", unb + "UNH+1+X:D:96A:UN'UNT+2+1'UNZ+1+IC1'ISA*00*", CodeNotSupportedPosition, 5, "ISA"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in), &Options{Lenient: true})
			pe := wantParseErr(t, err, c.code, len(c.in))
			if pe.Segment != c.seg || pe.Tag != c.tag {
				t.Errorf("segment %d %q, want %d %q: %v", pe.Segment, pe.Tag, c.seg, c.tag, err)
			}
		})
	}
}

func TestX12Envelope(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "x12_850.edi"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	cases := []struct {
		name, from, to string
		code           int
		tag            string
	}{
		{"SE count", "SE*8*0001", "SE*7*0001", CodeCountMismatch, "SE"},
		{"SE ref", "SE*8*0001", "SE*8*0002", CodeReferenceMismatch, "SE"},
		{"GE count", "GE*1*101", "GE*2*101", CodeCountMismatch, "GE"},
		{"IEA ref", "IEA*1*000000101", "IEA*1*000000102", CodeReferenceMismatch, "IEA"},
		{"IEA count", "IEA*1*", "IEA*3*", CodeCountMismatch, "IEA"},
		{"ST outside GS", "GS*PO*BUYERID*SELLERID*20240315*0930*101*X*005010~\n", "", CodeOutsideEnvelope, "ST"},
		{"SE missing", "SE*8*0001~\n", "", CodeMissing, "GE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(s, c.from, c.to, 1)
			_, err := Parse([]byte(in), nil)
			pe := wantParseErr(t, err, c.code, len(in))
			if pe.Tag != c.tag {
				t.Errorf("tag %q, want %q: %v", pe.Tag, c.tag, err)
			}
		})
	}
	// Control numbers must be identical strings: "101" does not close
	// "000000101", nor "1" an ST02 "0001" (partner issue).
	for _, c := range []struct{ from, to, tag string }{
		{"IEA*1*000000101", "IEA*1*101", "IEA"},
		{"GE*1*101", "GE*1*0101", "GE"},
		{"SE*8*0001", "SE*8*1", "SE"},
	} {
		in := strings.Replace(s, c.from, c.to, 1)
		_, err := Parse([]byte(in), nil)
		if pe := wantParseErr(t, err, CodeReferenceMismatch, len(in)); pe.Tag != c.tag || pe.Element != 2 {
			t.Errorf("%s: tag %q element %d: %v", c.to, pe.Tag, pe.Element, err)
		}
	}
	// ST02 is AN 4/9: "001" is refused even when SE02 repeats it.
	in := strings.NewReplacer("ST*850*0001", "ST*850*001", "SE*8*0001", "SE*8*001").Replace(s)
	_, err = Parse([]byte(in), nil)
	if pe := wantParseErr(t, err, CodeInvalidValue, len(in)); pe.Tag != "ST" || !strings.Contains(pe.Error(), "shorter than 4") {
		t.Errorf("short ST02: %v", err)
	}
}

// TestMissingTrailerNamesLastSegment: a trailer missing at the end is not
// given the number of a segment that does not exist.
func TestMissingTrailerNamesLastSegment(t *testing.T) {
	in := "UNB+UNOA:3+S+R+240101:1200+IC1'UNH+1+X:D:96A:UN'BGM+1'"
	_, err := Parse([]byte(in), nil)
	pe := wantParseErr(t, err, CodeMissing, len(in))
	if pe.Segment != 0 || pe.Tag != "UNT" || !strings.Contains(pe.Error(), "input ends after segment 3 BGM inside message") {
		t.Errorf("segment %d tag %q: %v", pe.Segment, pe.Tag, err)
	}
	if _, err := Parse([]byte("UNB+UNOA:3+S+R+240101:1200+IC1'"), nil); err == nil ||
		!strings.Contains(err.Error(), "after segment 1 UNB inside interchange") {
		t.Errorf("UNB only: %v", err)
	}
}

func TestReaderStream(t *testing.T) {
	// Two interchanges with different separators, CRLF between segments.
	in := "UNB+UNOA:3+S+R+240101:1200+1'\r\nUNH+1+X:D:96A:UN'\r\nUNT+2+1'\r\nUNZ+1+1'\r\n" +
		"UNA|#.\\ ~UNB#UNOA|4#S#R#240101|1200#2~UNH#1#X|D|96A|UN~FTX#A\\#B|C~UNT#3#1~UNZ#1#2~"
	r := NewReader(strings.NewReader(in))
	var tags []string
	var sep []Separators
	for {
		s, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tags = append(tags, s.Tag)
		sep = append(sep, r.Separators())
		if s.Tag == "FTX" && (s.Value(1, 1) != "A#B" || s.Value(1, 2) != "C") {
			t.Errorf("FTX = %q", s.Elements)
		}
		if s.Tag == "UNH" && s.Line != 2 && s.Line != 5 {
			t.Errorf("UNH at line %d col %d", s.Line, s.Column)
		}
	}
	if got := strings.Join(tags, " "); got != "UNB UNH UNT UNZ UNB UNH FTX UNT UNZ" {
		t.Errorf("tags %s", got)
	}
	if sep[0].Element != '+' || sep[5].Element != '#' || sep[5].Repetition != 0 || sep[5].Release != '\\' {
		t.Errorf("separators %+v %+v", sep[0], sep[5])
	}
	if _, err := r.Read(); err != io.EOF {
		t.Errorf("after EOF: %v", err)
	}
}

func TestReuseSegment(t *testing.T) {
	in := "UNB+UNOA:3+S+R+240101:1200+1'UNH+1+X:D:96A:UN'BGM+380+A:B'UNT+3+1'UNZ+1+1'"
	for _, reuse := range []bool{false, true} {
		r := NewReader(strings.NewReader(in))
		r.ReuseSegment = reuse
		var kept []*Segment
		var clones []Segment
		for {
			s, err := r.Read()
			if err != nil {
				break
			}
			kept = append(kept, s)
			clones = append(clones, s.Clone())
		}
		if len(clones) != 5 || clones[2].Tag != "BGM" || clones[2].Value(2, 2) != "B" || clones[1].Value(2, 3) != "96A" {
			t.Fatalf("reuse=%v: clones %+v", reuse, clones)
		}
		if same := kept[0] == kept[1]; same != reuse {
			t.Errorf("reuse=%v: segments shared = %v", reuse, same)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (&Options{MaxElementLen: 10, MaxSegmentLen: 5}).Validate(); err == nil {
		t.Error("element cap above segment cap accepted")
	}
	if err := (*Options)(nil).Validate(); err != nil {
		t.Error(err)
	}
	_, err := Guard([]byte("UNB"), &Options{MaxSize: -1})
	if c, ok := err.(interface{ Cause() string }); !ok || c.Cause() != CauseSchema {
		t.Errorf("options error %v", err)
	}
}

// A later interchange is held to its own syntax identifier.
func TestLaterInterchangeRepertoire(t *testing.T) {
	first := "UNB+UNOB:3+S+R+240101:1200+1'UNH+1+X:D:96A:UN'FTX+lower'UNT+3+1'UNZ+1+1'"
	second := "UNB+UNOA:3+S+R+240101:1200+2'UNH+1+X:D:96A:UN'FTX+lower'UNT+3+1'UNZ+1+2'"
	_, err := Parse([]byte(first+second), nil)
	wantGuardErr(t, err, CodeInvalidCharacter, int64(len(first)+strings.Index(second, "lower")))
	doc, err := Parse([]byte(first+second), &Options{Lenient: true})
	if err != nil || len(doc.Warnings) != 5 {
		t.Fatalf("lenient: %v %v", err, doc)
	}
	_, err = Parse([]byte(first+strings.Replace(second, "UNOA:3", "UNOA:9", 1)), nil)
	wantParseErr(t, err, CodeSyntaxNotSupported, 200)
}

func TestX12Binary(t *testing.T) {
	isa := "ISA*00*          *00*          *ZZ*A              *ZZ*B              *240315*0930*^*00501*000000001*0*P*:~"
	// BIN01 = 8: the data holds the terminator, a line feed and a NUL.
	in := "\xef\xbb\xbf" + isa + "GS*FA*A*B*20240315*0930*1*X*005010~ST*999*1~BIN*8*a~b\nc\x00de~SE*3*1~GE*1*1~IEA*1*1~"
	r := NewReader(strings.NewReader(in))
	var bin *Segment
	for {
		s, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.Tag == "BIN" {
			bin = s
		}
	}
	if bin == nil || bin.Value(1, 1) != "8" || bin.Value(2, 1) != "a~b\nc\x00de" {
		t.Fatalf("BIN = %+v", bin)
	}
	// A length that overruns the input is a positioned error.
	bad := isa + "GS*FA*A*B*20240315*0930*1*X*005010~ST*999*1~BIN*99*abc~SE*3*1~"
	r = NewReader(strings.NewReader(bad))
	var err error
	for err == nil {
		_, err = r.Read()
	}
	wantParseErr(t, err, CodeMissing, len(bad))
}

func TestWalk(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "orders_una_release.edi"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	doc, err := Walk(data, nil, func(m *Message) error {
		b, err := m.MarshalJSON()
		if err != nil {
			return err
		}
		w, _ := want.Messages()[len(seen)].MarshalJSON()
		if !bytes.Equal(b, w) {
			t.Errorf("message %s differs from Parse:\n%s\n%s", m.Ref, b, w)
		}
		seen = append(seen, m.Ref)
		return nil
	})
	if err != nil || strings.Join(seen, ",") != "M1,M2" || len(doc.Messages()) != 2 || doc.Messages()[0].Segments != nil {
		t.Fatalf("err %v seen %v", err, seen)
	}
	stop := errors.New("stop")
	if _, err := Walk(data, nil, func(*Message) error { return stop }); err != stop {
		t.Errorf("fn error: %v", err)
	}
	if _, err := Walk([]byte(hdr+"UNT+9+1'UNZ+1+1'"), nil, nil); err == nil {
		t.Error("validation pass accepted a bad count")
	}
}

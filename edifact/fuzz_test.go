package edifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// seeds adds the corpus (when present) and our testdata to a fuzz target.
func seeds(f *testing.F) {
	for _, dir := range []string{corpusDir(), "testdata"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, name := range files {
			if filepath.Ext(name) == ".tsv" || filepath.Ext(name) == ".md" {
				continue
			}
			if b, err := os.ReadFile(name); err == nil && len(b) > 0 {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("UNA:+.? 'UNB+UNOA:4+S+R+20240101:1200+1'UNH+1+X:D:96A:UN'FTX+?@??'UNT+3+1'UNZ+1+1'"))
	f.Add([]byte("UNA?????? "))
	f.Add([]byte("UNB\x1dUNOB\x1f4\x1dS\x1dR\x1d1\x1f1\x1d1\x1cUNH\x1d1\x1dX\x1fD\x1f96A\x1fUN\x1e2\x1c"))
}

// FuzzParse: Parse never panics, and every error keeps the contract the hub
// relies on (cause, printable one line, offset within the input). A success
// always renders as JSON.
func FuzzParse(f *testing.F) {
	seeds(f)
	opts := &Options{MaxSize: 1 << 20, MaxSegmentLen: 4096, MaxElementLen: 1024}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lenient := range []bool{false, true} {
			o := *opts
			o.Lenient = lenient
			doc, err := Parse(data, &o)
			// Walk must agree with Parse exactly: same verdict, same messages.
			walked := 0
			wdoc, werr := Walk(data, &o, func(m *Message) error {
				if len(m.Segments) < 2 {
					t.Fatalf("message %q with %d segments", m.Ref, len(m.Segments))
				}
				walked++
				return nil
			})
			if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
				t.Fatalf("Parse: %v\nWalk:  %v", err, werr)
			}
			// So must Check, reading in small chunks (fuzz workers run one
			// input at a time, so the package variable is safe to set).
			var sum *Summary
			var cerr error
			withChunk(int64(len(data)%13+1), func() { sum, cerr = Check(bytes.NewReader(data), int64(len(data)), &o) })
			if (err == nil) != (cerr == nil) || (err != nil && err.Error() != cerr.Error()) {
				t.Fatalf("Parse: %v\nCheck: %v", err, cerr)
			}
			if err == nil && (sum.Messages != len(doc.Messages()) || sum.Segments != doc.Segments) {
				t.Fatalf("Check %+v, Parse %d messages %d segments", sum, len(doc.Messages()), doc.Segments)
			}
			if err != nil {
				checkErrorContract(t, err, len(data))
				continue
			}
			if walked != len(doc.Messages()) || len(wdoc.Messages()) != walked {
				t.Fatalf("Walk saw %d messages, Parse %d", walked, len(doc.Messages()))
			}
			n := 0
			for _, ic := range doc.Interchanges {
				n += ic.Segments
				for _, m := range ic.Messages {
					b, err := m.MarshalJSON()
					if err != nil || !json.Valid(b) {
						t.Fatalf("message JSON: %v", err)
					}
					// The direct writer (json_direct.go) must give the same bytes.
					if d, err := MessageJSON(m); err != nil || !bytes.Equal(d, b) {
						t.Fatalf("MessageJSON %s (%v)\nMarshalJSON %s", d, err, b)
					}
				}
			}
			if n != doc.Segments {
				t.Fatalf("interchanges hold %d segments, document %d", n, doc.Segments)
			}
			if _, err := json.Marshal(doc); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzReader: the Reader alone (no Guard in front) never panics, never
// reports a position outside the input, and always ends. ReadRaw, on a
// second Reader, agrees with Read on every segment and error; so do Read
// and ReadRaw on Readers without the one-pass scan (fast.go), in small
// buffers so that segments are cut by refills.
func FuzzReader(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		r.MaxSegmentLen, r.MaxElementLen = 4096, 1024
		r.ReuseSegment = len(data)%2 == 0
		raw := NewReader(bytes.NewReader(data))
		raw.MaxSegmentLen, raw.MaxElementLen = 4096, 1024
		slow := newReaderSize(bytes.NewReader(data), 256+len(data)%200)
		slow.MaxSegmentLen, slow.MaxElementLen, slow.noFast = 4096, 1024, true
		slowRaw := newReaderSize(bytes.NewReader(data), 256+len(data)%200)
		slowRaw.MaxSegmentLen, slowRaw.MaxElementLen, slowRaw.noFast = 4096, 1024, true
		for i := 0; i <= len(data); i++ {
			s, err := r.Read()
			rs, rerr := raw.ReadRaw()
			if (err == nil) != (rerr == nil) || (err != nil && err.Error() != rerr.Error()) {
				t.Fatalf("Read: %v\nReadRaw: %v", err, rerr)
			}
			if err == nil {
				sameRaw(t, s, rs)
			}
			ss, serr := slow.Read()
			if !sameError(err, serr) {
				t.Fatalf("Read: %v\nRead without the scan: %v", err, serr)
			}
			srs, srerr := slowRaw.ReadRaw()
			if !sameError(err, srerr) {
				t.Fatalf("Read: %v\nReadRaw without the scan: %v", err, srerr)
			}
			if err == nil {
				sameSegment(t, s, ss)
				sameRaw(t, s, srs)
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("%T: %v", err, err)
				}
				checkErrorContract(t, err, len(data))
				return
			}
			if s.Offset < 0 || s.Offset >= int64(len(data)) || s.Tag == "" {
				t.Fatalf("segment %q at offset %d of %d", s.Tag, s.Offset, len(data))
			}
		}
		t.Fatalf("more segments than bytes")
	})
}

// sameRaw checks that a RawSegment says what the Segment says.
func sameRaw(t *testing.T, s *Segment, rs *RawSegment) {
	t.Helper()
	if string(rs.Tag()) != s.Tag || rs.Len() != len(s.Elements) || rs.Offset != s.Offset ||
		rs.Line != s.Line || rs.Column != s.Column || rs.Number != s.Number {
		t.Fatalf("raw %q %d elements at %d:%d:%d #%d, segment %q %d at %d:%d:%d #%d", rs.Tag(), rs.Len(),
			rs.Offset, rs.Line, rs.Column, rs.Number, s.Tag, len(s.Elements), s.Offset, s.Line, s.Column, s.Number)
	}
	for e, comps := range s.Elements {
		if rs.Components(e+1) != len(comps) {
			t.Fatalf("%s element %d: %d components raw, %d", s.Tag, e+1, rs.Components(e+1), len(comps))
		}
		for c, v := range comps {
			if got := rs.Value(e+1, c+1); got != v {
				t.Fatalf("%s element %d component %d: raw %q, %q", s.Tag, e+1, c+1, got, v)
			}
		}
	}
}

// sameError reports whether two errors of the Reader say the same, with the
// same positions.
func sameError(a, b error) bool {
	if (a == nil) != (b == nil) || (a != nil && a.Error() != b.Error()) {
		return false
	}
	var pa, pb *ParseError
	if errors.As(a, &pa) != errors.As(b, &pb) {
		return false
	}
	return pa == nil || (pa.Offset == pb.Offset && pa.Line == pb.Line && pa.Column == pb.Column &&
		pa.Segment == pb.Segment && pa.Tag == pb.Tag && pa.Element == pb.Element && pa.Component == pb.Component && pa.Code == pb.Code)
}

// sameSegment checks that two Segments are equal, repetitions included.
func sameSegment(t *testing.T, a, b *Segment) {
	t.Helper()
	if a.Tag != b.Tag || a.Offset != b.Offset || a.Line != b.Line || a.Column != b.Column || a.Number != b.Number ||
		!reflect.DeepEqual(a.Elements, b.Elements) || !reflect.DeepEqual(a.Repeats, b.Repeats) {
		t.Fatalf("segment %+v\nwithout the scan %+v", *a, *b)
	}
}

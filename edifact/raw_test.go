package edifact

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadRaw: ReadRaw gives the values of Read, without strings, also for
// released separators, repetitions and an X12 BIN segment.
func TestReadRaw(t *testing.T) {
	for _, in := range []string{
		"UNA:+.? 'UNB+UNOA:4+S+R+20240101:1200+1'UNH+1+X:D:96A:UN'FTX+A?+B?:C?'D+E:F*G:H++'UNT+3+1'UNZ+1+1'",
		strings.Replace(x12Sample(t), "REF*", "BIN*3*a~b~REF*", 1),
	} {
		r, raw := NewReader(strings.NewReader(in)), NewReader(strings.NewReader(in))
		for {
			s, err := r.Read()
			rs, rerr := raw.ReadRaw()
			if (err == nil) != (rerr == nil) {
				t.Fatalf("Read %v, ReadRaw %v", err, rerr)
			}
			if err != nil {
				if err != io.EOF {
					t.Fatal(err)
				}
				break
			}
			sameRaw(t, s, rs)
		}
	}
	r := NewReader(strings.NewReader("UNB+UNOA:3+S+R+1:1+1'UNH+1+X:D:96A:UN'FTX+A?+B'"))
	for i := 0; i < 2; i++ {
		r.ReadRaw()
	}
	rs, err := r.ReadRaw()
	if err != nil || string(rs.Bytes(1, 1)) != "A+B" || rs.Bytes(2, 1) != nil || rs.Bytes(0, 1) != nil {
		t.Errorf("%v %q", err, rs.Bytes(1, 1))
	}
	// Nothing is allocated per segment.
	r = NewReader(strings.NewReader("UNB+UNOA:3+S+R+1:1+1'UNH+1+X:D:96A:UN'" + strings.Repeat("LIN+1++4000862141404:EN'QTY+47:5:PCE'", 200)))
	r.ReadRaw()
	if n := testing.AllocsPerRun(100, func() {
		if _, err := r.ReadRaw(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per ReadRaw", n)
	}
}

func x12Sample(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join("testdata", "x12_850.edi"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

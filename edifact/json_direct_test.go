package edifact

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// MessageJSON writes the view directly; it must be MarshalJSON's bytes for
// every input the reader accepts, including what needs escapes or takes
// the reflection path (non-ASCII, repetition).
func TestMessageJSONIsMarshalJSON(t *testing.T) {
	inputs := map[string][]byte{
		"specials":   []byte(`UNA:+.? 'UNB+UNOC:3+S"1:14+R\1+261130:1200+REF"1'UNH+1+INVOIC:D:96A:UN'FTX+AAA+++a "quoted" \back\slash <b>&amp;?'s~ {x}` + "\x7f'UNT+3+1'UNZ+1+REF\"1'"),
		"latin1":     []byte("UNA:+.? 'UNB+UNOC:3+S:14+R:14+261130:1200+L1'UNH+1+INVOIC:D:96A:UN'FTX+AAA+++M\xfcller Stra\xdfe'UNT+3+1'UNZ+1+L1'"),
		"groups":     []byte("UNB+UNOA:2+S+R+261130:1200+G1'UNG+INVOIC+S:1+R:1+261130:1200+7+UN+D:96A'UNH+1+INVOIC:D:96A:UN'BGM+380'UNT+3+1'UNE+1+7'UNZ+1+G1'"),
		"repetition": []byte("UNA:+.?*'UNB+UNOC:4+S+R+20261130:1200+V4'UNH+1+PAXLST:D:05B:UN'ATT+2++M*F'UNT+3+1'UNZ+1+V4'"),
	}
	files, _ := filepath.Glob("testdata/*.edi")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = data
	}
	for name, data := range inputs {
		n := 0
		_, err := Walk(data, &Options{Lenient: true}, func(m *Message) error {
			n++
			got, want, err := viewAndMarshal(m)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s message %d:\n got %s\nwant %s", name, n, got, want)
			}
			return nil
		})
		if err != nil && n == 0 {
			continue // inputs the reader refuses have no view
		}
	}
}

// A message over sizedFrom segments renders into a buffer sized from its
// segments: the same bytes as MarshalJSON, plain or with escapes or
// non-ASCII values, and, plain, in one buffer of exactly its size.
func TestSizedMessageJSONIsMarshalJSON(t *testing.T) {
	big := func(seg string) []byte {
		var b bytes.Buffer
		b.WriteString("UNA:+.? 'UNB+UNOC:3+S:14+R:14+261130:1200+BIG'UNH+1+INVOIC:D:96A:UN'BGM+380+1+9'")
		for i := 0; i < sizedFrom+500; i++ {
			b.WriteString(seg)
		}
		b.WriteString("UNT+" + strconv.Itoa(sizedFrom+503) + "+1'UNZ+1+BIG'")
		return b.Bytes()
	}
	for name, c := range map[string]struct {
		seg   string
		exact bool
	}{
		"plain":   {"LIN+1++4000862141404:SRS'", true},
		"empty":   {"LIN++++:'", true},
		"escapes": {`FTX+AAA+++a "quoted" \back\slash'`, false},
		"latin1":  {"FTX+AAA+++M\xfcller'", false},
	} {
		_, err := Walk(big(c.seg), &Options{Lenient: true}, func(m *Message) error {
			if len(m.Segments) <= sizedFrom {
				t.Fatalf("%s: %d segments, not over %d", name, len(m.Segments), sizedFrom)
			}
			got, want, err := viewAndMarshal(m)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the sized view differs from MarshalJSON (%d and %d bytes)", name, len(got), len(want))
			}
			if c.exact && viewSize(m)-len(got) > 1024 {
				t.Errorf("%s: viewSize %d for a view of %d bytes: the segments are not counted exactly", name, viewSize(m), len(got))
			}
			if cap(got)-len(got) > len(got)/8 {
				t.Errorf("%s: %d bytes kept for a view of %d", name, cap(got), len(got))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// viewAndMarshal is m's JSON by the sized view (MessageJSON) and by
// MarshalJSON, to be compared.
func viewAndMarshal(m *Message) (got, want []byte, err error) {
	if got, err = MessageJSON(m); err != nil {
		return nil, nil, err
	}
	want, err = m.MarshalJSON()
	return got, want, err
}

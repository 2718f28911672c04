package edifact

import (
	"bytes"
	"os"
	"path/filepath"
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
			got, err := MessageJSON(m)
			if err != nil {
				return err
			}
			want, err := m.MarshalJSON()
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

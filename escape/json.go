package escape

import (
	"encoding/json"
	"io"
	"unicode/utf8"
)

// JSON is json.Marshal whose output is also safe to print: see JSONBytes.
func JSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return JSONBytes(b), nil
}

// JSONBytes rewrites the runes of encoded JSON that encoding/json (and
// zerolog) leave raw but that act on a terminal or on the direction of
// text: DEL, C1 controls (U+0080–U+009F, U+009B is CSI), U+2028/U+2029 and
// the bidi controls (U+061C, U+200E/U+200F, U+202A–U+202E,
// U+2066–U+2069), as \uXXXX. Bytes that are not UTF-8 become \ufffd. These
// can only occur inside strings, so the result is valid JSON with the same
// data: a program reading it sees no difference, a person running `cat` or
// `jq -c` on it sees no control. b is returned as is when nothing needs a
// change.
func JSONBytes(b []byte) []byte {
	i := firstUnsafeJSON(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				out = appendU(out, 0x7f)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = appendU(out, utf8.RuneError)
		case unsafeRune(r):
			out = appendU(out, r)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func appendU(out []byte, r rune) []byte {
	const lower = "0123456789abcdef"
	return append(out, '\\', 'u', lower[r>>12&15], lower[r>>8&15], lower[r>>4&15], lower[r&15])
}

func firstUnsafeJSON(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			return i
		}
		i += n
	}
	return -1
}

// JSONWriter applies JSONBytes to everything written to w. Each Write must
// carry whole JSON values (json.Encoder and zerolog write one value per
// call), so no rune is split between two writes.
func JSONWriter(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(JSONBytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

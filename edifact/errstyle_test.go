package edifact

import (
	"strings"
	"testing"
)

// Quoted input in an error is in package escape's style inside double
// quotes (\x01, \\), never Go's %q around 0xNN: one error, one style.
func TestErrorsQuoteInEscapeStyle(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"UNA:+.? '\x01UNB+UNOC:3+S+R+261130:1200+1'", `found "\x01UNB+UNO"`},
		{"UNA:+.? 'X\\Y", `found "X\\Y"`},
		{"\x02\x03junk", `found "\x02\x03junk"`},
	} {
		_, err := Parse([]byte(tc.in), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want it to contain %s", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), `"0x`) {
			t.Errorf("%q: mixed styles: %v", tc.in, err)
		}
	}
}

package directory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/edihub/edihub/edifact"
)

// FuzzValidate feeds arbitrary interchanges through edifact.Walk and the
// validator (shipped directories plus the synthetic TESTMS): it must never
// panic, every finding must point into the message with a 0085 code and
// printable text, and Err must agree with the severities.
//
//	go test -run '^$' -fuzz FuzzValidate -fuzztime 30s ./edifact/directory/
func FuzzValidate(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.edi"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(envelope("TESTMS:D:99Z:UN", "AAA+A1+12.+:9", "BBB+X", "BBB+Y", "BBB+Z", "CCC", "DDD+1")))
	f.Add([]byte("UNA:+.?*'UNB+UNOC:4+S+R+20200101:1200+1'UNH+1+ORDERS:D:96A:UN'BGM+220*221+1'UNT+3+1'UNZ+1+1'"))
	set := builtin(f).With(testDir())
	strict, _ := NewValidator(set, &Options{Strictness: Strict, MaxFindings: 1000})
	lenient, _ := NewValidator(set, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = edifact.Walk(data, &edifact.Options{Lenient: true}, func(m *edifact.Message) error {
			for _, v := range []*Validator{strict, lenient} {
				r := v.Validate(m)
				errs := 0
				for _, fd := range r.Findings {
					if fd.Segment < 1 || fd.Segment > len(m.Segments)+1 || fd.Code < 2 || fd.Code > 50 || !printableASCII(fd.Msg) {
						t.Fatalf("bad finding %+v in a message of %d segments", fd, len(m.Segments))
					}
					if fd.Element < 0 || fd.Component < 0 || (fd.Component > 0 && fd.Element == 0) {
						t.Fatalf("bad position %+v", fd)
					}
					if fd.Severity == SeverityError {
						errs++
					}
				}
				if (r.Err() != nil) != (errs > 0) {
					t.Fatalf("Err %v with %d errors", r.Err(), errs)
				}
				if err := r.Err(); err != nil && !printableASCII(err.Error()) {
					t.Fatalf("unprintable error %q", err.Error())
				}
			}
			return nil
		})
	})
}

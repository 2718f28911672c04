package partner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/edifact/directory"
)

// corpusDir is the shared corpus (EDIHUB_CORPUS, else ../shared/corpus
// beside the clone).
func corpusDir() string {
	if d := os.Getenv("EDIHUB_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "corpus")
}

// Every real file of the corpus, decided with a profile that agrees
// nothing in particular but wants every acknowledgement: whatever the
// decision (accepted, refused by the parser or by the directory), every
// acknowledgement built parses with edihub's own parser and passes strict
// directory validation. Real files bring the envelopes, qualifiers,
// separators and syntax versions our golden files do not.
func TestCorpusAcknowledgementsRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir(), "*__*"))
	if len(files) == 0 {
		t.Skipf("corpus not found in %s: set EDIHUB_CORPUS to the shared corpus directory", corpusDir())
	}
	strict := strictValidator(t)
	r := newRegistry(t, Profile{ID: "P", Ack: AckConfig{CONTRL: AckAll, APERAK: true, X12: Type999, X12All: true, TA1: AckAll}})
	acks, refused := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := r.Try(t.Context(), "P", nil, data, &edifact.Options{Lenient: true})
		if !d.Accepted {
			refused++
		}
		for _, a := range d.Acks {
			acks++
			doc, err := edifact.Parse(a.Data, nil)
			if err != nil {
				t.Errorf("%s: the %s for it does not parse: %v\n%s", filepath.Base(f), a.Header.Get("x-message-type"), err, a.Data)
				continue
			}
			for _, m := range doc.Messages() {
				if doc.Standard != edifact.EDIFACT {
					break
				}
				for _, fd := range strict.Validate(m).Findings {
					// UCI echoes the original's sender and recipient: a
					// qualifier outside code list 0007 is the partner's
					// (real files use "ZZ", "16", "31B"), not ours.
					if fd.Severity != directory.SeverityError || fd.Tag == "UCI" && (fd.Element == 2 || fd.Element == 3) && fd.Code == 12 {
						continue
					}
					t.Errorf("%s: the %s for it fails strict directory validation: %s\n%s", filepath.Base(f), m.Type, fd, a.Data)
				}
			}
		}
	}
	t.Logf("%d corpus files, %d refused (lenient parse, lenient directory), %d acknowledgements built, each parsed and validated", len(files), refused, acks)
}

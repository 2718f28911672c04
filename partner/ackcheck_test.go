package partner

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/edifact/directory"
	"github.com/edihub/edihub/wire"
)

// strictValidator validates as `edihub edifact validate --strictness
// strict` does, on the built-in directories.
func strictValidator(t *testing.T) *directory.Validator {
	t.Helper()
	set, err := builtin()
	if err != nil {
		t.Fatal(err)
	}
	strict, err := directory.NewValidator(set, &directory.Options{Strictness: directory.Strict, RejectUnknown: true})
	if err != nil {
		t.Fatal(err)
	}
	return strict
}

// strictAcks checks that every acknowledgement says x-ack-result result
// (a TA1 has none), parses with edihub's parser and, for EDIFACT, passes
// strict directory validation; it returns them one a line.
func strictAcks(t *testing.T, strict *directory.Validator, acks []*nats.Msg, result string) []byte {
	t.Helper()
	var all bytes.Buffer
	for _, a := range acks {
		if a.Header.Get(wire.HdrAckResult) != result && a.Header.Get(wire.HdrMessageType) != TypeTA1 {
			t.Errorf("%s: x-ack-result %q, want %s", a.Header.Get(wire.HdrMessageType), a.Header.Get(wire.HdrAckResult), result)
		}
		ackDoc, err := edifact.Parse(a.Data, &edifact.Options{})
		if err != nil {
			t.Fatalf("ack does not parse: %v\n%s", err, a.Data)
		}
		if ackDoc.Standard == edifact.EDIFACT {
			for _, m := range ackDoc.Messages() {
				if err := strict.Validate(m).Err(); err != nil {
					t.Fatalf("fails strict directory validation: %v\n%s", err, a.Data)
				}
			}
		}
		all.Write(a.Data)
		all.WriteByte('\n')
	}
	return all.Bytes()
}

// matchesGolden checks that the acknowledgements all hold each of want
// and are testdata/golden/<name>.edi byte for byte (-update rewrites it).
func matchesGolden(t *testing.T, name string, all []byte, want []string) {
	t.Helper()
	for _, w := range want {
		if !bytes.Contains(all, []byte(w)) {
			t.Errorf("acknowledgements lack %s:\n%s", w, all)
		}
	}
	golden := filepath.Join("testdata", "golden", name+".edi")
	if *update {
		if err := os.WriteFile(golden, all, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantAll, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./partner -update)", err)
	}
	if !bytes.Equal(wantAll, all) {
		t.Fatalf("differs from %s:\n got: %s\nwant: %s", golden, all, wantAll)
	}
}

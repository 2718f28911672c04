package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/ledger"
	"github.com/edihub/edihub/parse"
)

var filepathGlob = filepath.Glob

// benchLedger answers "not seen" and records nothing: the stage's own cost.
type benchLedger struct{}

func (benchLedger) Duplicate(parse.LedgerKey, string) (bool, error) { return false, nil }
func (benchLedger) Granted(string, string) (bool, error)            { return false, nil }
func (benchLedger) Commit([]parse.LedgerKey, string) ledger.Wait {
	return func(context.Context) error { return nil }
}

// BenchmarkParseStage is the parse stage alone on the bench's interchanges:
//
//	go test -run '^$' -bench ParseStage -benchmem ./cmd/edihub/
func BenchmarkParseStage(b *testing.B) {
	for _, name := range []string{"1k", "100k", "5m"} {
		c := parseClasses(20000)[name]
		data := benchInvoice("R000000001", c.UNH, c.Lines)
		st := parse.Stage(parse.Config{}, benchLedger{})
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			seq := uint64(0)
			for b.Loop() {
				seq++
				m := &hub.Message{Subject: "edi.ingest.0.P1", Partner: "P1", Stream: "INGEST", Seq: seq, Delivered: 1,
					Header: nats.Header{}, Data: data}
				if err := st.Handle(context.Background(), m); err != nil {
					b.Fatal(err)
				}
				if len(m.Outputs()) != c.UNH {
					b.Fatalf("%d outputs", len(m.Outputs()))
				}
			}
		})
	}
}

// TestBenchInvoiceSizes keeps the generated interchanges at their sizes.
func TestBenchInvoiceSizes(t *testing.T) {
	for name, want := range map[string]int{"1k": 1 << 10, "100k": 100 << 10, "5m": 5 << 20} {
		c := parseClasses(20000)[name]
		got := len(benchInvoice("R000000001", c.UNH, c.Lines))
		if got < want*9/10 || got > want*11/10 {
			t.Errorf("%s: %d bytes, want about %d", name, got, want)
		}
		st := parse.Stage(parse.Config{}, nil)
		m := &hub.Message{Partner: "P1", Stream: "INGEST", Seq: 1, Header: nats.Header{}, Data: benchInvoice("R"+strconv.Itoa(1), c.UNH, c.Lines)}
		if err := st.Handle(context.Background(), m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m.Outputs()) != c.UNH {
			t.Fatalf("%s: %d outputs, want %d", name, len(m.Outputs()), c.UNH)
		}
	}
}

// TestParseStageJSONIsTheLibrarys: the stage renders its outputs without
// encoding/json in the common case; they must be edifact.MessageJSON byte
// for byte, for every input the library accepts.
func TestParseStageJSONIsTheLibrarys(t *testing.T) {
	inputs := map[string][]byte{
		"bench-1k":   benchInvoice("R1", 1, 7),
		"bench-many": benchInvoice("R2", 30, 3),
		"specials":   []byte(`UNA:+.? 'UNB+UNOC:3+S"1:14+R\1+261130:1200+REF"1'UNH+1+INVOIC:D:96A:UN'FTX+AAA+++a "quoted" \back\slash <b>&amp;?'s~ {x}'UNT+3+1'UNZ+1+REF"1'`),
		"latin1":     []byte("UNA:+.? 'UNB+UNOC:3+S:14+R:14+261130:1200+L1'UNH+1+INVOIC:D:96A:UN'FTX+AAA+++M\xfcller Stra\xdfe'UNT+3+1'UNZ+1+L1'"),
		"groups":     []byte("UNB+UNOA:2+S+R+261130:1200+G1'UNG+INVOIC+S:1+R:1+261130:1200+7+UN+D:96A'UNH+1+INVOIC:D:96A:UN'BGM+380'UNT+3+1'UNE+1+7'UNZ+1+G1'"),
		"repetition": []byte("UNA:+.?*'UNB+UNOC:4+S+R+20261130:1200+V4'UNH+1+PAXLST:D:05B:UN'ATT+2++M*F'UNT+3+1'UNZ+1+V4'"),
	}
	files, _ := filepathGlob("../../edifact/testdata/*.edi")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = data
	}
	for name, data := range inputs {
		var want [][]byte
		if _, err := edifact.Walk(data, nil, func(m *edifact.Message) error {
			j, err := edifact.MessageJSON(m)
			want = append(want, j)
			return err
		}); err != nil {
			t.Fatalf("%s: not accepted by the library: %v", name, err)
		}
		m := &hub.Message{Partner: "P1", Stream: "INGEST", Seq: 7, Header: nats.Header{}, Data: data}
		if err := parse.Stage(parse.Config{}, nil).Handle(context.Background(), m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m.Outputs()) != len(want) {
			t.Fatalf("%s: %d outputs, want %d", name, len(m.Outputs()), len(want))
		}
		for i, o := range m.Outputs() {
			if !bytes.Equal(o.Data, want[i]) {
				t.Errorf("%s message %d:\n got %s\nwant %s", name, i+1, o.Data, want[i])
			}
		}
	}
}

// countingLedger counts lookups and answers "seen by another" for keys in dup.
type countingLedger struct {
	benchLedger
	mu    sync.Mutex
	calls map[parse.LedgerKey]int
	dup   map[string]bool
}

func (c *countingLedger) Duplicate(k parse.LedgerKey, _ string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[k]++
	return c.dup[k.ControlRef], nil
}

// TestParseStageAsksTheLedgerOncePerInterchange: no interchange is asked
// twice, and an interchange is a duplicate only when all its envelopes are.
func TestParseStageAsksTheLedgerOncePerInterchange(t *testing.T) {
	two := append(benchInvoice("TWO1", 2, 3), benchInvoice("TWO2", 1, 3)[len("UNA:+.? '"):]...)
	for name, tc := range map[string]struct {
		data []byte
		dup  map[string]bool
		want error
		keys int
	}{
		"small":         {benchInvoice("S1", 1, 7), nil, nil, 1},
		"large":         {benchInvoice("L1", 1, 1050), nil, nil, 1},
		"large dup":     {benchInvoice("L2", 1, 1050), map[string]bool{"L2": true}, &hub.DuplicateError{}, 1},
		"two, one dup":  {two, map[string]bool{"TWO1": true}, nil, 2},
		"two, both dup": {two, map[string]bool{"TWO1": true, "TWO2": true}, &hub.DuplicateError{}, 2},
	} {
		led := &countingLedger{calls: map[parse.LedgerKey]int{}, dup: tc.dup}
		m := &hub.Message{Partner: "P1", Stream: "INGEST", Seq: 9, Header: nats.Header{}, Data: tc.data}
		err := parse.Stage(parse.Config{}, led).Handle(context.Background(), m)
		if (err == nil) != (tc.want == nil) {
			t.Fatalf("%s: error %v, want %v", name, err, tc.want)
		}
		if len(led.calls) != tc.keys {
			t.Errorf("%s: %d keys asked, want %d: %v", name, len(led.calls), tc.keys, led.calls)
		}
		for k, n := range led.calls {
			if n != 1 {
				t.Errorf("%s: %v asked %d times", name, k, n)
			}
		}
		if err != nil && len(m.Outputs()) != 0 {
			t.Errorf("%s: %d outputs left on a duplicate", name, len(m.Outputs()))
		}
	}
}

package directory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/edifact"
)

// ordersInterchange is one interchange of n ORDERS D96A messages with
// lines LIN groups each, every message valid in strict mode.
func ordersInterchange(n, lines int) []byte {
	var b strings.Builder
	b.WriteString("UNA:+.? 'UNB+UNOC:3+5412345000013:14+4012345000016:14+200101:1200+REF1'\n")
	for i := 1; i <= n; i++ {
		segs := 0
		fmt.Fprintf(&b, "UNH+M%d+ORDERS:D:96A:UN:EAN008'\nBGM+220+PO%d+9'\nDTM+137:20200101:102'\nDTM+2:20200115:102'\n", i, i)
		b.WriteString("NAD+BY+5412345000013::9'\nNAD+SU+4012345000016::9'\nCUX+2:EUR:9'\n")
		segs += 7
		for l := 1; l <= lines; l++ {
			fmt.Fprintf(&b, "LIN+%d++4000862141404:EN'\nQTY+21:%d'\nPRI+AAA:12.50'\n", l, l%50+1)
			segs += 3
		}
		fmt.Fprintf(&b, "UNS+S'\nCNT+2:%d'\nUNT+%d+M%d'\n", lines, segs+3, i)
	}
	fmt.Fprintf(&b, "UNZ+%d+REF1'\n", n)
	return []byte(b.String())
}

// reportCPU adds CPU time per operation (cpu-ns/op) and input bytes per
// CPU second (cpu-MB/s) to a benchmark: the machine is shared, so wall time
// (ns/op, MB/s) also counts the waits for a core.
func reportCPU(b *testing.B, start time.Duration, bytes int) {
	cpu := cpuTime() - start
	if cpu <= 0 || b.N == 0 {
		return
	}
	per := float64(cpu.Nanoseconds()) / float64(b.N)
	b.ReportMetric(per, "cpu-ns/op")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)/per*1e3, "cpu-MB/s")
	}
}

func benchCorpus(b *testing.B) [][]byte {
	files, _ := filepath.Glob(filepath.Join(corpusDir(), "*__*"))
	if len(files) == 0 {
		b.Skip("no corpus (set EDIHUB_CORPUS)")
	}
	var out [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// BenchmarkDirectory compares, side by side, edifact.Walk alone (guard,
// reader, envelope checks) with Walk plus directory validation of every
// message, in lenient and strict mode, on a 1 MB interchange of ORDERS
// D96A messages (20 lines each) and on the whole corpus. MB/s is of input.
//
//	go test -run '^$' -bench Directory -benchtime 2s ./edifact/directory/
func BenchmarkDirectory(b *testing.B) {
	set := builtin(b)
	orders := ordersInterchange(1200, 20)
	inputs := []struct {
		name  string
		files [][]byte
	}{{"orders1MB", [][]byte{orders}}, {"corpus", benchCorpus(b)}}
	modes := []struct {
		name string
		v    *Validator
	}{{"parse-only", nil}}
	for _, s := range []Strictness{Lenient, Strict} {
		v, _ := NewValidator(set, &Options{Strictness: s})
		modes = append(modes, struct {
			name string
			v    *Validator
		}{"parse+validate-" + string(s), v})
	}
	opts := &edifact.Options{Lenient: true}
	for _, in := range inputs {
		total := 0
		for _, f := range in.files {
			total += len(f)
		}
		for _, m := range modes {
			b.Run(in.name+"/"+m.name, func(b *testing.B) {
				b.SetBytes(int64(total))
				b.ReportAllocs()
				msgs := 0
				start := cpuTime()
				for b.Loop() {
					for _, f := range in.files {
						_, _ = edifact.Walk(f, opts, func(msg *edifact.Message) error {
							msgs++
							if m.v != nil {
								m.v.Validate(msg)
							}
							return nil
						})
					}
				}
				reportCPU(b, start, total)
				b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msg/s")
			})
		}
	}
}

// BenchmarkValidateMessage is the cost of Validate alone on one parsed
// ORDERS message of 20 lines (68 segments).
func BenchmarkValidateMessage(b *testing.B) {
	v, _ := NewValidator(builtin(b), nil)
	doc, err := edifact.Parse(ordersInterchange(1, 20), nil)
	if err != nil {
		b.Fatal(err)
	}
	m := doc.Messages()[0]
	if r := v.Validate(m); len(r.Findings) != 0 {
		b.Fatalf("benchmark message is not clean: %v", r.Findings)
	}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		v.Validate(m)
	}
	reportCPU(b, start, 0)
}

// BenchmarkParseMessage is edifact.Walk over the interchange of that one
// message, for comparison with BenchmarkValidateMessage in the same run.
func BenchmarkParseMessage(b *testing.B) {
	data := ordersInterchange(1, 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := edifact.Walk(data, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start, len(data))
}

// BenchmarkBuiltin is the cost of decoding the shipped tables (once per
// process in the hub).
func BenchmarkBuiltin(b *testing.B) {
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := Builtin(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start, 0)
}

package edifact

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
)

func corpusConcat(tb testing.TB) [][]byte {
	dir := corpusDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*__*"))
	if len(files) == 0 {
		tb.Skipf("corpus not found in %s (set EDIHUB_CORPUS)", dir)
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// BenchmarkReaderCorpus reads every corpus file with the Reader (reusing
// segments), as far as each one reads.
func BenchmarkReaderCorpus(b *testing.B) {
	files := corpusConcat(b)
	total := 0
	for _, f := range files {
		total += len(f)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	r := NewReader(nil)
	r.ReuseSegment = true
	for b.Loop() {
		for _, f := range files {
			r.Reset(bytes.NewReader(f))
			for {
				if _, err := r.Read(); err != nil {
					break
				}
			}
		}
	}
}

// invoic10MB is made on first use, so that it is not in the heap of the
// scaling benchmark.
var invoic10MB = sync.OnceValue(func() []byte { return genINVOIC(invoic10MBLines) })

const invoic10MBLines = 115_000

func BenchmarkReader10MB(b *testing.B) {
	benchReader10MB(b, func(r *Reader) error {
		r.ReuseSegment = true
		_, err := r.Read()
		return err
	})
}

// benchReader10MB reads the 10 MB INVOIC to its end with next and checks
// the segment count.
func benchReader10MB(b *testing.B, next func(*Reader) error) {
	b.SetBytes(int64(len(invoic10MB())))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(invoic10MB()))
		n := 0
		for {
			err := next(r)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != invoicSegments(invoic10MBLines) {
			b.Fatalf("read %d segments", n)
		}
	}
}

func BenchmarkGuard10MB(b *testing.B) {
	data := invoic10MB()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Guard(data, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse10MB(b *testing.B) {
	data := invoic10MB()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var doc *Document
	for b.Loop() {
		var err error
		if doc, err = Parse(data, nil); err != nil {
			b.Fatal(err)
		}
	}
	// What a parsed document costs to hold, beyond its input.
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc-uint64(len(data)))/(1<<20), "doc-heap-MB")
	runtime.KeepAlive(doc)
}

// BenchmarkReaderScaling streams 1, 10 and 100 MB through the Reader from a
// generator (the input is never in memory): ns/op should grow linearly and
// peak-heap-MB stay flat.
func BenchmarkReaderScaling(b *testing.B) {
	for _, c := range []struct {
		name  string
		lines int
	}{{"1MB", 10_000}, {"10MB", 100_000}, {"100MB", 1_000_000}} {
		b.Run(c.name, func(b *testing.B) {
			// Peak live heap, sampled from the GC's own measure: what a hub
			// worker must budget per concurrent interchange.
			sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			var peak uint64
			size := int64(len(invoicHead)) + int64(c.lines)*100
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				runtime.GC()
				r := NewReader(newInvoicReader(c.lines))
				r.ReuseSegment = true
				for n := 0; ; n++ {
					if _, err := r.Read(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					if n%20000 == 0 {
						metrics.Read(sample)
						peak = max(peak, sample[0].Value.Uint64())
					}
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(c.lines), "lines")
		})
	}
}

// The plain alternatives over the same 10 MB buffer, run beside
// BenchmarkReader10MB so that the ratio is visible in one run: the floor a
// separator scan can reach (bytes.IndexByte for the terminator only) and a
// 256-entry table loop over every byte (all four separators).
func BenchmarkScanIndexByte10MB(b *testing.B) {
	data := invoic10MB()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		n := 0
		for p := data; ; n++ {
			k := bytes.IndexByte(p, '\'')
			if k < 0 {
				break
			}
			p = p[k+1:]
		}
		if n != invoicSegments(invoic10MBLines)+1 { // +1: the UNA
			b.Fatalf("%d terminators", n)
		}
	}
}

func BenchmarkScanTable10MB(b *testing.B) {
	data := invoic10MB()
	var cls [256]uint8
	for _, c := range []byte(":+?'") {
		cls[c] = 1
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		n := 0
		for _, c := range data {
			n += int(cls[c])
		}
		if n == 0 {
			b.Fatal("no separators")
		}
	}
}

// BenchmarkReaderRaw10MB reads the same interchange with ReadRaw: the same
// checks, no strings.
func BenchmarkReaderRaw10MB(b *testing.B) {
	benchReader10MB(b, func(r *Reader) error {
		_, err := r.ReadRaw()
		return err
	})
}

// BenchmarkWalkSmall is the hub's common case: one small INVOIC. What it
// allocates per interchange is what the parse stage pays per message.
func BenchmarkWalkSmall(b *testing.B) {
	in := []byte("UNA:+.? 'UNB+UNOC:3+SENDER1:14+RECEIVER1:14+261130:1200+REF0001'" +
		"UNH+1+INVOIC:D:96A:UN'BGM+380+INV001+9'DTM+137:20261130:102'NAD+BY+4012345000009::9'" +
		"LIN+1++4000862141404:SRS'QTY+47:10'MOA+203:100'UNS+S'MOA+77:100'UNT+10+1'UNZ+1+REF0001'")
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Walk(in, nil, func(*Message) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

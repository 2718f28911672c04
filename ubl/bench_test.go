package ubl

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func validCorpus(b *testing.B) ([][]byte, int64) {
	files, _ := filepath.Glob(filepath.Join(corpus, "valid", "*"))
	if len(files) == 0 {
		b.Skip("corpus not found at " + corpus + " (EDIHUB_UBL_CORPUS)")
	}
	var docs [][]byte
	var total int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, data)
		total += int64(len(data))
	}
	return docs, total
}

// BenchmarkUBL runs, side by side over the 35 valid corpus documents per
// op: encoding/xml decoding each into an empty struct (the plain
// alternative: tokenizing without keeping anything), the guard alone,
// guard + parse, guard + parse + validate (EN 16931 and the Peppol subset),
// and all that + the JSON view.
func BenchmarkUBL(b *testing.B) {
	docs, total := validCorpus(b)
	run := func(name string, fn func([]byte) error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				for _, d := range docs {
					if err := fn(d); err != nil {
						b.Fatal(err)
					}
				}
			}
			if cpu := cpuTime() - start; cpu > 0 {
				per := float64(cpu.Nanoseconds()) / float64(b.N)
				b.ReportMetric(per, "cpu-ns/op")
				b.ReportMetric(float64(total)/per*1e3, "cpu-MB/s")
			}
		})
	}
	run("encoding-xml-empty-struct", func(d []byte) error {
		var v struct{}
		return xml.Unmarshal(d, &v)
	})
	run("guard", func(d []byte) error { _, err := Guard(d, nil); return err })
	run("parse", func(d []byte) error { _, err := ParseBytes(d, nil); return err })
	run("parse+validate", func(d []byte) error {
		_, _, err := Check(d, nil, &Options{Profile: ProfilePeppol})
		return err
	})
	run("parse+validate+json", func(d []byte) error {
		doc, _, err := Check(d, nil, &Options{Profile: ProfilePeppol})
		if err != nil {
			return err
		}
		return doc.JSON(io.Discard)
	})
}

package edifact

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// sameAsParse checks that Check and WalkReaderAt over data give Parse's
// verdict: the same error text, or the same counts.
func sameAsParse(t *testing.T, name string, data []byte, o *Options) {
	t.Helper()
	doc, err := Parse(data, o)
	sum, cerr := Check(bytes.NewReader(data), int64(len(data)), o)
	wdoc, werr := WalkReaderAt(bytes.NewReader(data), int64(len(data)), o, nil)
	for _, got := range []error{cerr, werr} {
		if (err == nil) != (got == nil) || (err != nil && err.Error() != got.Error()) {
			t.Fatalf("%s (chunk %d): Parse: %v\nstreamed: %v", name, chunkSize, err, got)
		}
	}
	if err != nil {
		return
	}
	if sum.Standard != doc.Standard || sum.Interchanges != len(doc.Interchanges) || sum.Messages != len(doc.Messages()) ||
		sum.Segments != doc.Segments || fmt.Sprint(sum.Warnings) != fmt.Sprint(doc.Warnings) {
		t.Fatalf("%s (chunk %d): Check %+v, Parse %d/%d/%d %v", name, chunkSize, sum,
			len(doc.Interchanges), len(doc.Messages()), doc.Segments, doc.Warnings)
	}
	if len(wdoc.Messages()) != len(doc.Messages()) {
		t.Fatalf("%s: WalkReaderAt %d messages, Parse %d", name, len(wdoc.Messages()), len(doc.Messages()))
	}
}

// withChunk runs fn with the guard's chunk size set to n bytes.
func withChunk(n int64, fn func()) {
	old := chunkSize
	chunkSize = n
	defer func() { chunkSize = old }()
	fn()
}

// TestCheckMatchesParse: the streaming checks agree with Parse on every
// corpus and testdata file, the hostile inputs below, and with chunks cut
// at every small size (headers, CRLF, UTF-8 characters split across chunks).
func TestCheckMatchesParse(t *testing.T) {
	inputs := map[string][]byte{
		"bom":           []byte("\xEF\xBB\xBFUNB+UNOA:3+S+R+240101:1200+1'UNH+1+X:D:96A:UN'UNT+2+1'UNZ+1+1'"),
		"padding":       []byte("UNB+UNOA:3+S+R+240101:1200+1'UNH+1+X:D:96A:UN'UNT+2+1'UNZ+1+1'\n\x00\x1a\x00"),
		"only padding":  []byte("\x00\x1a"),
		"empty":         {},
		"newlines":      []byte("\r\n\r\n"),
		"utf16":         []byte("\xFF\xFEU\x00"),
		"junk":          []byte("    XYZ UNB+UNOA:3+S+R+1:1+1'"),
		"bad utf8":      []byte("UNB+UNOW:3+S+R+240101:1200+1'UNH+1+X:D:96A:UN'FTX+\xe2\x82\xac\xe2\x82'UNT+3+1'UNZ+1+1'"),
		"utf8":          []byte("UNB+UNOW:3+S+R+240101:1200+1'UNH+1+X:D:96A:UN'FTX+\xe2\x82\xac\xf0\x9f\x98\x80'UNT+3+1'UNZ+1+1'"),
		"cut":           []byte(hdr + "BGM+1'"),
		"second syntax": []byte("UNB+UNOC:3+S+R+1:1+1'UNH+1+X:D:96A:UN'FTX+\xe9'UNT+3+1'UNZ+1+1'UNB+UNOA:3+S+R+1:1+2'UNH+1+X:D:96A:UN'FTX+\xe9'UNT+3+1'UNZ+1+2'"),
	}
	for _, dir := range []string{corpusDir(), "testdata"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && !strings.HasSuffix(f, ".tsv") && !strings.HasSuffix(f, ".md") {
				inputs[filepath.Base(f)] = b
			}
		}
	}
	for _, n := range []int64{1, 2, 3, 5, 8, 64, 1 << 20} {
		withChunk(n, func() {
			for name, data := range inputs {
				for _, lenient := range []bool{false, true} {
					sameAsParse(t, name, data, &Options{Lenient: lenient})
				}
			}
		})
	}
}

// TestCheckSizeLimit: the refusal names the input's size, not the limit.
func TestCheckSizeLimit(t *testing.T) {
	data := []byte(hdr + "UNT+2+1'UNZ+1+1'")
	_, err := Check(bytes.NewReader(data), int64(len(data)), &Options{MaxSize: 10})
	ge := wantGuardErr(t, err, CodeUnspecified, 10)
	if want := fmt.Sprintf("input is %d bytes, over the limit of 10", len(data)); ge.Msg != want {
		t.Errorf("%q, want %q", ge.Msg, want)
	}
}

// writeManyMessages writes one interchange of small messages (about 250
// bytes each) until it holds size bytes.
func writeManyMessages(t testing.TB, path string, size int) (msgs int) {
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(fh)
	n, _ := fmt.Fprint(w, "UNA:+.? 'UNB+UNOA:3+SENDER:14+RECEIVER:14+240101:1200+REF1'\n")
	for n < size {
		msgs++
		k, _ := fmt.Fprintf(w, "UNH+%d+INVOIC:D:96A:UN:EAN008'\nBGM+380+INV%08d+9'\nDTM+137:20240101:102'\n"+
			"NAD+SU+4000001000005::9++SUPPLIER GMBH?+CO KG+STRASSE 1+STADT++12345+DE'\n"+
			"LIN+1++4000862141404:EN'\nQTY+47:%d:PCE'\nMOA+203:%d.50'\nUNT+8+%d'\n", msgs, msgs, msgs%97+1, msgs*3, msgs)
		n += k
	}
	fmt.Fprintf(w, "UNZ+%d+REF1'\n", msgs)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestCheckBoundedMemory checks a 20 MB interchange of small messages from
// a file and samples the heap meanwhile: it stays far below the input size
// (Parse would hold about ten times the input).
func TestCheckBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 20 MB")
	}
	const size = 20 << 20
	path := filepath.Join(t.TempDir(), "big.edi")
	msgs := writeManyMessages(t, path, size)
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	stop := samplePeakHeap()
	sum, err := Check(fh, st.Size(), &Options{MaxSize: st.Size()})
	p := stop()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Messages != msgs || sum.Interchanges != 1 {
		t.Fatalf("%+v, want %d messages", sum, msgs)
	}
	// Live data is a 1 MiB chunk, the reader's 64 KiB buffer, an arena
	// block and the map of the open interchange's message references (for
	// the duplicate check, ~60 bytes per message: the only part that grows);
	// the rest is garbage not yet collected (GOGC=100 lets the heap double).
	// Holding the input alone would take 20 MB, Parse about 200 MB.
	limit := uint64(size)
	t.Logf("%d bytes, %d messages: peak heap %.1f MB (sampled), limit %.1f MB", st.Size(), msgs, float64(p)/(1<<20), float64(limit)/(1<<20))
	if p > limit {
		t.Errorf("peak heap %d bytes over %d", p, limit)
	}
}

// samplePeakHeap samples the heap's object bytes every millisecond until
// stop is called, which returns the largest value seen.
func samplePeakHeap() (stop func() uint64) {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

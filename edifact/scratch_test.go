package edifact

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestWalkScratchReuse: Walks that share pooled buffers (one after
// another, concurrently, after a Walk that stopped inside a message, small
// inputs and one above smallWalk) hand every callback exactly the message
// Parse keeps.
func TestWalkScratchReuse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.edi"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	type want struct {
		data  []byte
		jsons [][]byte
	}
	var wants []want
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Parse(data, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		w := want{data: data}
		for _, m := range doc.Messages() {
			j, err := MessageJSON(m)
			if err != nil {
				t.Fatal(err)
			}
			w.jsons = append(w.jsons, j)
		}
		wants = append(wants, w)
	}
	// And one above smallWalk, whose buffers are cleared as it goes.
	big := genINVOIC(1000)
	if len(big) <= smallWalk {
		t.Fatalf("generated input of %d bytes is not above smallWalk", len(big))
	}
	bigDoc, err := Parse(big, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := want{data: big}
	for _, m := range bigDoc.Messages() {
		j, err := MessageJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		w.jsons = append(w.jsons, j)
	}
	wants = append(wants, w)
	// An input whose Walk stops inside a message: its callback errs.
	broken := bytes.Replace(wants[0].data, []byte("UNT"), []byte("XXX"), 1)

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if _, err := Walk(broken, nil, func(*Message) error { return nil }); err == nil {
					t.Error("a message without UNT walked without error")
					return
				}
				w := wants[(g+i)%len(wants)]
				n := 0
				_, err := Walk(w.data, nil, func(m *Message) error {
					j, err := MessageJSON(m)
					if err != nil {
						return err
					}
					if n >= len(w.jsons) || !bytes.Equal(j, w.jsons[n]) {
						t.Errorf("message %d differs from Parse's", n)
					}
					n++
					return nil
				})
				if err != nil || n != len(w.jsons) {
					t.Errorf("walk: %v, %d of %d messages", err, n, len(w.jsons))
					return
				}
			}
		}()
	}
	wg.Wait()
}

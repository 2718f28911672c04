package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runEdifactCmd runs "edihub edifact ..." in-process and returns the exit
// code, stdout and stderr.
func runEdifactCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := run(context.Background(), e, append([]string{"edifact"}, args...))
	return code, out.String(), errb.String()
}

func writeFiles(t *testing.T) (good, bad, lower string) {
	dir := t.TempDir()
	good = filepath.Join(dir, "good.edi")
	bad = filepath.Join(dir, "bad.edi")
	lower = filepath.Join(dir, "lower.edi")
	const unb = "UNB+UNOA:3+S+R+240101:1200+IC1'\n"
	for name, body := range map[string]string{
		good:  unb + "UNH+1+INVOIC:D:96A:UN'\nBGM+380+1'\nUNT+3+1'\nUNZ+1+IC1'\n",
		bad:   unb + "UNH+1+INVOIC:D:96A:UN'\nBGM+380+1'\nUNT+9+1'\nUNZ+1+IC1'\n",
		lower: unb + "UNH+1+INVOIC:D:96A:UN'\nFTX+AAI+++hello'\nUNT+3+1'\nUNZ+1+IC1'\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return good, bad, lower
}

func TestEdifactCheck(t *testing.T) {
	good, bad, lower := writeFiles(t)

	code, out, _ := runEdifactCmd(t, "", "check", good)
	if code != exitOK || out != "ok  "+good+"  (1 interchange, 1 message, 5 segments)\n" {
		t.Errorf("good: exit %d, %q", code, out)
	}

	code, out, stderr := runEdifactCmd(t, "", "check", good, bad)
	if code != exitFailed {
		t.Errorf("bad: exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "FAIL "+bad+": schema: segment 4 UNT at line 4 col 1") ||
		!strings.Contains(lines[1], "(code 29)") {
		t.Errorf("bad: %q", out)
	}
	if !strings.Contains(stderr, "1 of 2 files failed") {
		t.Errorf("stderr %q", stderr)
	}

	// Strict refuses lowercase under UNOA; --lenient (after the file) warns.
	if code, out, _ = runEdifactCmd(t, "", "check", lower); code != exitFailed || !strings.Contains(out, "outside the UNOA repertoire") {
		t.Errorf("lower strict: exit %d %q", code, out)
	}
	if code, out, _ = runEdifactCmd(t, "", "check", lower, "--lenient"); code != exitOK || !strings.Contains(out, "warning: byte 'h'") {
		t.Errorf("lower lenient: exit %d %q", code, out)
	}

	// --json: one document, one object per file, with the error position.
	code, out, _ = runEdifactCmd(t, "", "check", "--json", good, bad)
	if code != exitFailed {
		t.Errorf("json: exit %d", code)
	}
	var doc struct {
		Files      []map[string]any `json:"files"`
		OK, Failed int
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.OK != 1 || doc.Failed != 1 {
		t.Fatalf("json: one document: %v %s", err, out)
	}
	res := doc.Files
	if len(res) != 2 || res[0]["ok"] != true || res[0]["messages"] != 1.0 || res[1]["ok"] != false ||
		res[1]["code"] != 29.0 || res[1]["tag"] != "UNT" || res[1]["segment"] != 4.0 || res[1]["cause"] != "schema" {
		t.Errorf("json: %v", res)
	}

	// The size limit refuses before parsing, and names the file's size (not
	// the limit + 1 that was read), from a file and from stdin.
	st, _ := os.Stat(good)
	want := fmt.Sprintf("input is %d bytes, over the limit of 10", st.Size())
	if code, out, _ = runEdifactCmd(t, "", "check", "--max-size", "10", good); code != exitFailed || !strings.Contains(out, want) {
		t.Errorf("max-size: exit %d %q, want %q", code, out, want)
	}
	body, _ := os.ReadFile(good)
	if code, out, _ = runEdifactCmd(t, string(body), "check", "--max-size", "10", "-"); code != exitFailed || !strings.Contains(out, want) {
		t.Errorf("max-size stdin: exit %d %q, want %q", code, out, want)
	}
	if code, _, stderr := runEdifactCmd(t, "", "json", "--max-size", "10", good); code != exitFailed || !strings.Contains(stderr, want) {
		t.Errorf("json max-size: exit %d %q, want %q", code, stderr, want)
	}
	// The error line keeps the quoted bytes as they are: four spaces stay
	// four (as in --json), not one.
	indented := filepath.Join(t.TempDir(), "indented.edi")
	if err := os.WriteFile(indented, []byte("    XYZ+1'"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ = runEdifactCmd(t, "", "check", indented); code != exitFailed || !strings.Contains(out, `found "    XYZ+"`) {
		t.Errorf("indented: exit %d %q", code, out)
	}
	// stdin.
	if code, out, _ = runEdifactCmd(t, "UNB+UNOA:3+S+R+1:1+1'UNH+1+X:D:96A:UN'UNT+2+1'UNZ+1+1'", "check", "-"); code != exitOK || !strings.HasPrefix(out, "ok  -  (1 interchange") {
		t.Errorf("stdin: exit %d %q", code, out)
	}
}

func TestEdifactUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"frobnicate"}, {"check"}, {"json"}, {"check", "--max-size", "-5", "x"}, {"check", "--nope", "x"}} {
		if code, _, _ := runEdifactCmd(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, out, _ := runEdifactCmd(t, "", "check", filepath.Join(t.TempDir(), "missing.edi")); code != exitUsage || !strings.HasPrefix(out, "FAIL ") {
		t.Errorf("missing file: exit %d %q", code, out)
	}
}

func TestEdifactJSON(t *testing.T) {
	good, bad, _ := writeFiles(t)
	code, out, _ := runEdifactCmd(t, "", "json", good)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Standard     string `json:"standard"`
		Interchanges []struct {
			ControlRef string `json:"controlRef"`
			Messages   []struct {
				Type     string `json:"type"`
				Segments []struct {
					Tag      string     `json:"tag"`
					Elements [][]string `json:"elements"`
				} `json:"segments"`
			} `json:"messages"`
		} `json:"interchanges"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if doc.Standard != "EDIFACT" || doc.Interchanges[0].ControlRef != "IC1" || doc.Interchanges[0].Messages[0].Type != "INVOIC" ||
		doc.Interchanges[0].Messages[0].Segments[1].Elements[0][0] != "380" || !strings.Contains(out, "\n  ") {
		t.Errorf("json view: %s", out)
	}
	if code, _, stderr := runEdifactCmd(t, "", "json", bad); code != exitFailed || !strings.Contains(stderr, "code 29") {
		t.Errorf("bad: exit %d %q", code, stderr)
	}
}

// writeBigInterchange writes one UNB with small messages (~250 bytes each)
// until the file holds size bytes, and returns the number of messages.
func writeBigInterchange(t *testing.T, path string, size int) int {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(fh)
	n, _ := fmt.Fprint(w, "UNA:+.? 'UNB+UNOA:3+SENDER:14+RECEIVER:14+240101:1200+REF1'\n")
	msgs := 0
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

// TestEdifactCheckStreams checks a 20 MB interchange and samples the heap
// meanwhile: the file is never held (the old check read it whole and
// parsed it into ~10x its size). The check runs in a child (this test
// binary, run again): the heap is the process's, and what other tests of
// the package left running (or the collector target serve sets
// process-wide) made the bound fail now and then.
func TestEdifactCheckStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 20 MB")
	}
	if path := os.Getenv("EDIHUB_TEST_CHECK_CHILD"); path != "" {
		checkHeapChild(t, path)
		return
	}
	const size = 20 << 20
	path := filepath.Join(t.TempDir(), "big.edi")
	msgs := writeBigInterchange(t, path, size)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestEdifactCheckStreams$", "-test.v")
	cmd.Env = append(os.Environ(), "EDIHUB_TEST_CHECK_CHILD="+path, "GOGC=100")
	outb, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, outb)
	}
	var peak uint64
	var out string
	for _, line := range strings.Split(string(outb), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "peak-heap "); ok {
			peak, _ = strconv.ParseUint(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "check-output "); ok {
			out, _ = strconv.Unquote(v)
		}
	}
	want := fmt.Sprintf("ok  %s  (1 interchange, %d messages, %d segments)\n", path, msgs, 8*msgs+2)
	if peak == 0 || out != want {
		t.Fatalf("child said %q, want %q; output:\n%s", out, want, outb)
	}
	// A proportional bound: less than the file itself (holding the document
	// took ten times the file); the live part is a 1 MiB chunk plus ~60
	// bytes per message reference (duplicate check), and the garbage
	// collector's pacing, which under -race and load roughly doubles it.
	t.Logf("peak heap %.1f MB for a %d MB file", float64(peak)/(1<<20), size>>20)
	if limit := uint64(size); peak > limit {
		t.Errorf("peak heap %d bytes, over %d", peak, limit)
	}
}

// checkHeapChild is the child of TestEdifactCheckStreams: it checks path
// and prints the peak heap and the check's output.
func checkHeapChild(t *testing.T, path string) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done, peakc := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				peakc <- peak
				return
			case <-tick.C:
			}
		}
	}()
	code, out, _ := runEdifactCmd(t, "", "check", "--max-size", "30000000", path)
	close(done)
	peak := <-peakc
	if code != exitOK {
		t.Fatalf("exit %d %q", code, out)
	}
	fmt.Printf("peak-heap %d\ncheck-output %q\n", peak, out)
}

// TestEdifactCheckRSS50MB (opt-in: EDIHUB_BIG_CHECK=1) builds edihub and
// checks a 50 MB interchange in a child process: its peak RSS must stay
// under 100 MB (it was 789 MB for 52 MB when the check held the file).
func TestEdifactCheckRSS50MB(t *testing.T) {
	if os.Getenv("EDIHUB_BIG_CHECK") == "" {
		t.Skip("set EDIHUB_BIG_CHECK=1 to build edihub and check 50 MB")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "edihub")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "big.edi")
	msgs := writeBigInterchange(t, path, 50<<20)
	cmd := exec.Command(bin, "edifact", "check", "--max-size", "60000000", path)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok  ") {
		t.Fatalf("%v: %s", err, out)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
	t.Logf("%d messages in %v: max RSS %.1f MB: %s", msgs, time.Since(start), float64(rss)/1024, strings.TrimSpace(string(out)))
	if rss > 100<<10 {
		t.Errorf("max RSS %d KiB, over 100 MiB", rss)
	}
}

package sandbox

import (
	"bytes"
	"strings"
	"testing"
)

func TestReadEventsBoundsAndRecovers(t *testing.T) {
	var in bytes.Buffer
	w := &eventWriter{w: &in}
	w.send(&event{T: evProgress, Progress: &Progress{Segment: 1}})
	w.send(&event{T: evProgress, Progress: &Progress{Segment: 2, Note: strings.Repeat("n", 200<<10)}})
	in.WriteString("{not json\n")
	w.send(&event{T: evError, Error: "last"})
	in.WriteString(`{"t":"progress","p":{"segment":9}}`) // no newline at EOF

	var got []string
	var bad []error
	err := readEvents(&in, 100<<10, func(e *event) {
		s := e.T
		if e.Progress != nil {
			s += ":" + string(rune('0'+e.Progress.Segment))
		}
		got = append(got, s)
	}, func(err error) { bad = append(bad, err) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "progress:1,error,progress:9" {
		t.Errorf("records %v", got)
	}
	if len(bad) != 2 {
		t.Errorf("bad records %v", bad)
	}
}

func TestSpecDefaultsAndEnv(t *testing.T) {
	s := (&Spec{Path: "/x", Env: []string{"A=1"}, CPULimit: 1500 * 1e6}).withDefaults()
	if s.MemoryLimit != 256<<20 || s.cpuSeconds() != 2 || s.Timeout != 7e9 || s.MaxReportBytes != 1<<20 {
		t.Errorf("%+v", s)
	}
	env := strings.Join(s.childEnv(), " ")
	if env != "A=1 EDIHUB_SANDBOX_PROTOCOL=1 EDIHUB_SANDBOX_MEMORY=268435456 EDIHUB_SANDBOX_CPU=2 EDIHUB_SANDBOX_REPORT_FD=3" {
		t.Errorf("env %s", env)
	}
	if d := (&Spec{}).withDefaults(); d.Timeout != 35e9 || d.cpuSeconds() != 30 {
		t.Errorf("defaults %+v", d)
	}
}

func TestChildMainOutsideSandbox(t *testing.T) {
	// The test process has no protocol environment: ChildMain must refuse
	// before touching stdin or fd 3.
	if code := ChildMain(nil); code != exitProtocol {
		t.Errorf("exit code %d", code)
	}
}

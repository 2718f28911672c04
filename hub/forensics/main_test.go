package forensics

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/sandbox"
)

// The forensic tests re-run this test binary as the sandbox child, as the
// sandbox package's own tests do: with forensicChildVar set, TestMain is
// `edihub sandbox exec` with the test pipeline below.
const forensicChildVar = "EDIHUB_HUB_TEST_SANDBOX_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(forensicChildVar) != "" {
		os.Exit(sandbox.ChildMain(Analyzer(parse.Config{}, forensicTestStages()...)))
	}
	os.Exit(m.Run())
}

var hogSink [][]byte

// forensicTestStages is the child's pipeline: the built-in parse stage and
// two stages with bugs that an interchange can trigger by its BGM number.
func forensicTestStages() []hub.Stage {
	return []hub.Stage{
		parse.Stage(parse.Config{}, nil),
		{Name: "hog", Handle: func(ctx context.Context, m *hub.Message) error {
			if !strings.Contains(string(m.Data), "HOG") {
				return nil
			}
			for { // allocates without bound, touching every page
				b := make([]byte, 1<<20)
				for j := 0; j < len(b); j += 4096 {
					b[j] = 1
				}
				hogSink = append(hogSink, b)
			}
		}},
	}
}

// forensicMemoryLimit is the children's cap; a race child's ThreadSanitizer
// keeps allocating after start-up (as in the sandbox tests).
func forensicMemoryLimit() int64 {
	if forensicRaceEnabled {
		return 160 << 20
	}
	return 64 << 20
}

// testForensicSpec runs this binary as the child.
func testForensicSpec(t testing.TB) func(stage string) sandbox.Spec {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return func(stage string) sandbox.Spec {
		return sandbox.Spec{
			Path: exe, Args: []string{"-test.run=^$", "stage=" + stage},
			Env:         []string{forensicChildVar + "=1", "GORACE=atexit_sleep_ms=0"},
			MemoryLimit: forensicMemoryLimit(), CPULimit: time.Second, Timeout: 20 * time.Second,
		}
	}
}

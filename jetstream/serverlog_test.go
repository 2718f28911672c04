package jetstream

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// At debug level the embedded server's banner is its facts, one per line,
// without the ASCII art and rules drawn for a terminal.
func TestServerBannerIsTidyAtDebug(t *testing.T) {
	var buf bytes.Buffer
	l := zerolog.New(&buf).Level(zerolog.DebugLevel).With().Str("component", "nats-server").Logger()
	s, err := StartServer(&ServerOptions{DataDir: t.TempDir(), Listen: "127.0.0.1:-1", Logger: &l})
	if err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	s.WaitForShutdown()
	out := buf.String()
	if !strings.Contains(out, `"component":"nats-server"`) || !strings.Contains(out, "Starting nats-server") {
		t.Fatalf("server notices not logged at debug:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(line, `"message":""`) || strings.Contains(line, "___") || strings.Contains(line, "-----") || strings.Contains(line, "  ") {
			t.Errorf("banner decoration logged: %s", line)
		}
	}
	buf.Reset()
	info := zerolog.New(&buf).Level(zerolog.InfoLevel)
	s, err = StartServer(&ServerOptions{DataDir: t.TempDir(), Listen: "127.0.0.1:-1", Logger: &info})
	if err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	s.WaitForShutdown()
	if strings.Contains(buf.String(), "Starting nats-server") {
		t.Fatalf("notices at info level:\n%s", buf.String())
	}
}

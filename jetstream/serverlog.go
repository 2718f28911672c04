package jetstream

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/rs/zerolog"
)

// noticeLine logs one of nats-server's notices at debug level (component
// nats-server, set by the caller). The server's start-up banner is one
// notice per line, drawn for a terminal: logged as JSON its ASCII art,
// rules and padding are noise. Lines with no words are dropped, the rest
// trimmed ("  Version:  2.x" → "Version: 2.x"), so --log-level debug shows
// the banner's facts one per line and nothing else of it.
func noticeLine(l zerolog.Logger, format string, v ...any) {
	if !l.Debug().Enabled() {
		return
	}
	text := tidyNotice(fmt.Sprintf(format, v...))
	if text == "" {
		return
	}
	l.Debug().Msg(text)
}

// tidyNotice returns the words of a notice line, or "" for decoration.
func tidyNotice(s string) string {
	s = strings.Trim(s, " \t-=")
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			letters++
		}
	}
	if letters < 2 {
		return ""
	}
	return strings.Join(strings.Fields(s), " ")
}

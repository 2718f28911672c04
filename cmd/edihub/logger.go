package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/edihub/edihub/escape"
)

// newLogger builds the one logger the process passes around. Neither
// format lets a control sequence through: JSON lines carry C1 and bidi
// controls as \uXXXX (escape.JSONWriter), the console shows them as \xNN.
func newLogger(w io.Writer, level, format string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, fmt.Errorf("log level %q: want trace, debug, info, warn or error", level)
	}
	switch format {
	case "json":
		w = escape.JSONWriter(w)
	case "pretty":
		w = consoleWriter(w)
	case "auto", "":
		if isTerminal(w) {
			w = consoleWriter(w)
		} else {
			w = escape.JSONWriter(w)
		}
	default:
		return zerolog.Logger{}, fmt.Errorf("log format %q: want auto, json or pretty", format)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// consoleWriter is zerolog's pretty writer with every text a log event
// carries escaped: the console writer decodes the JSON event, so \u001b
// in it would reach the terminal as ESC. It quotes string field values
// that hold anything but printable ASCII itself; the message, field
// names and values that are not strings (lists, objects) are ours to
// escape. escape.Text keeps the log's own punctuation (—, →).
func consoleWriter(w io.Writer) zerolog.ConsoleWriter {
	return zerolog.ConsoleWriter{
		Out: w, TimeFormat: time.TimeOnly,
		FormatPrepare: func(evt map[string]any) error {
			for k, v := range evt {
				if s, ok := v.(string); ok && k == zerolog.MessageFieldName {
					evt[k] = escape.Text(s)
				}
				if ek := escape.Text(k); ek != k {
					delete(evt, k)
					evt[ek] = v
				}
			}
			return nil
		},
		FormatFieldValue: func(i any) string { return escape.Text(fmt.Sprintf("%s", i)) },
	}
}

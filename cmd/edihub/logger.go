package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"
)

// newLogger builds the one logger the process passes around.
func newLogger(w io.Writer, level, format string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, fmt.Errorf("log level %q: want trace, debug, info, warn or error", level)
	}
	switch format {
	case "json":
	case "pretty":
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	case "auto", "":
		if isTerminal(w) {
			w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
		}
	default:
		return zerolog.Logger{}, fmt.Errorf("log format %q: want auto, json or pretty", format)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

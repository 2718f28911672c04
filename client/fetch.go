package client

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/escape"
)

// streamSeq is STREAM:SEQ (PARSED:12); anything else is a subject.
var streamSeq = regexp.MustCompile(`^[A-Za-z0-9_-]+:[0-9]+$`)

// Fetched is a message read by Fetch, with the stream it is in.
type Fetched struct {
	*js.RawStreamMsg
	Stream string
}

// Fetch reads STREAM:SEQ (PARSED:12), or the last message on a subject
// from the stream that holds it (`edihub fetch`).
func Fetch(ctx context.Context, j js.JetStream, arg string) (Fetched, error) {
	var name, subject string
	var seq uint64
	if streamSeq.MatchString(arg) {
		n, s, _ := strings.Cut(arg, ":")
		seq, _ = strconv.ParseUint(s, 10, 64)
		name = strings.ToUpper(n)
	} else {
		subject = arg
		var err error
		if name, err = j.StreamNameBySubject(ctx, subject); err != nil {
			if errors.Is(err, js.ErrStreamNotFound) || errors.Is(err, nats.ErrNoResponders) {
				return Fetched{}, fmt.Errorf("no stream stores subject %s", escape.Line(subject))
			}
			return Fetched{}, err
		}
	}
	st, err := j.Stream(ctx, name)
	if err != nil {
		return Fetched{}, fmt.Errorf("stream %s: %w", escape.Line(name), err)
	}
	var m *js.RawStreamMsg
	if subject != "" {
		m, err = st.GetLastMsgForSubject(ctx, subject)
	} else {
		m, err = st.GetMsg(ctx, seq)
	}
	if err != nil {
		return Fetched{}, err
	}
	return Fetched{RawStreamMsg: m, Stream: name}, nil
}

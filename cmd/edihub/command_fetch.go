package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hubclient"
	"github.com/edihub/edihub/wire"
)

func init() {
	register(command{name: "fetch", summary: "a stored message's payload, fetched from the claim-check bucket when it was stored aside", run: runFetch})
}

// streamSeq is STREAM:SEQ (PARSED:12); anything else is a subject.
var streamSeq = regexp.MustCompile(`^[A-Za-z0-9_-]+:[0-9]+$`)

// fetchResult is `edihub fetch --json`.
type fetchResult struct {
	Message string `json:"message"`
	Subject string `json:"subject"`
	Ref     string `json:"ref,omitempty"` // empty: the payload was inline
	Size    int    `json:"size"`
	SHA256  string `json:"sha256,omitempty"`
	Out     string `json:"out,omitempty"`
}

func runFetch(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "fetch", "SUBJECT|STREAM:SEQ [--out FILE]")
	var cf clientFlags
	cf.register(fs, e)
	out := fs.String("out", "", "write the payload to `file` (default: standard output)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("fetch: want one SUBJECT (its last message) or STREAM:SEQ, e.g. PARSED:12")
	}
	if *out == "" && cf.json {
		return usageErr("fetch --json: give --out FILE (the JSON document goes to standard output)")
	}
	nc, j, err := cf.connect("edihub fetch")
	if err != nil {
		return hubDownErr(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	m, err := fetchMsg(ctx, j, pos[0])
	if err != nil {
		return failedErr("fetch %s: %v", escape.Line(pos[0]), err)
	}
	payload, err := hubclient.PayloadOf(ctx, j, m.Header, m.Data)
	if err != nil {
		return failedErr("fetch %s: %v", escape.Line(pos[0]), err)
	}
	res := fetchResult{Message: wire.MsgRef{Stream: m.stream, Seq: m.Sequence}.String(), Subject: m.Subject, Size: len(payload), Out: *out,
		Ref: m.Header.Get(wire.HdrPayloadRef)}
	if res.Ref != "" {
		res.SHA256 = m.Header.Get(wire.HdrPayloadSHA256)
	}
	if *out == "" {
		_, err = e.stdout.Write(payload)
		return err
	}
	if err := os.WriteFile(*out, payload, 0o600); err != nil {
		return failedErr("fetch: %v", err)
	}
	if cf.json {
		b, err := escape.JSON(res)
		if err != nil {
			return failedErr("%v", err)
		}
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	from := "inline"
	if res.Ref != "" {
		from = "from " + escape.Line(res.Ref) + " (SHA-256 checked)"
	}
	fmt.Fprintf(e.stderr, "%s: %d bytes %s written to %s\n", res.Message, res.Size, from, escape.Line(*out))
	return nil
}

type fetchedMsg struct {
	*js.RawStreamMsg
	stream string
}

// fetchMsg reads STREAM:SEQ, or the last message on a subject from the
// stream that holds it.
func fetchMsg(ctx context.Context, j js.JetStream, arg string) (fetchedMsg, error) {
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
				return fetchedMsg{}, fmt.Errorf("no stream stores subject %s", escape.Line(subject))
			}
			return fetchedMsg{}, err
		}
	}
	st, err := j.Stream(ctx, name)
	if err != nil {
		return fetchedMsg{}, fmt.Errorf("stream %s: %w", escape.Line(name), err)
	}
	var m *js.RawStreamMsg
	if subject != "" {
		m, err = st.GetLastMsgForSubject(ctx, subject)
	} else {
		m, err = st.GetMsg(ctx, seq)
	}
	if err != nil {
		return fetchedMsg{}, err
	}
	return fetchedMsg{RawStreamMsg: m, stream: name}, nil
}

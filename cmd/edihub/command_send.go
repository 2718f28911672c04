package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/wire"
)

func init() {
	register(command{name: "send", summary: "publish interchanges to edi.ingest.<partner>", run: runSend})
}

type sendResult struct {
	File          string `json:"file"`
	OK            bool   `json:"ok"`
	Stream        string `json:"stream,omitempty"`
	Seq           uint64 `json:"seq,omitempty"`
	Bytes         int    `json:"bytes"`
	CorrelationID string `json:"correlation_id,omitempty"`
	Error         string `json:"error,omitempty"`
}

func runSend(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "send", "--partner ID FILE... (- reads standard input)")
	var cf clientFlags
	cf.register(fs, e)
	partner := fs.String("partner", "", "partner ID (one subject token, e.g. ACME)")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the server's ack of each file")
	signKey := fs.String("sign-key", "", "sign each file with this Ed25519 key file (x-signature, x-signature-key; edihub partner keygen)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := wire.ValidPartnerID(*partner); err != nil {
		return usageErr("--partner %s: %v", escape.Line(*partner), err)
	}
	if fs.NArg() == 0 {
		return usageErr("name at least one file to send")
	}
	// A file that is not there is a usage mistake, said before anything is
	// sent (as edifact check does), not a send that failed.
	for _, f := range fs.Args() {
		if f == "-" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return usageErr("%s: %v", escape.Line(f), errors.Unwrap(err))
		}
	}
	sign, err := loadSignKey(*signKey)
	if err != nil {
		return err
	}
	nc, j, err := cf.connect("edihub-send")
	if err != nil {
		return hubDownErr(err)
	}
	defer nc.Close()

	files := fs.Args()
	progress := isTerminal(e.stderr) && len(files) > 1 && !cf.json
	failed := 0
	var results []sendResult // --json: one document for the command
	for i, f := range files {
		r := sendOne(ctx, e, j, *partner, f, *timeout, sign)
		if !r.OK {
			failed++
		}
		switch {
		case cf.json:
			results = append(results, r)
		case !r.OK && progress:
			fmt.Fprintf(e.stderr, "\rFAIL %s: %s\n", escape.Line(r.File), escape.Text(r.Error))
		case !r.OK:
			fmt.Fprintf(e.stderr, "FAIL %s: %s\n", escape.Line(r.File), escape.Text(r.Error))
		case !progress:
			fmt.Fprintf(e.stdout, "sent %s (%d bytes) → %s seq %d\n", escape.Line(r.File), r.Bytes, escape.Line(r.Stream), r.Seq)
		}
		if progress {
			fmt.Fprintf(e.stderr, "\rsent %d/%d files, %d failed", i+1, len(files), failed)
		}
	}
	if progress {
		fmt.Fprintln(e.stderr)
	}
	if cf.json {
		b, _ := escape.JSON(map[string]any{"files": results, "sent": len(files) - failed, "failed": failed})
		fmt.Fprintln(e.stdout, string(b))
	}
	if failed > 0 {
		return failedErr("%d of %d files were not sent", failed, len(files))
	}
	return nil
}

func sendOne(ctx context.Context, e *env, j js.JetStream, partner, file string, timeout time.Duration, sign signFunc) sendResult {
	r := sendResult{File: file}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(e.stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Bytes = len(data)
	r.CorrelationID = nuid.Next()
	msg := &nats.Msg{Subject: wire.IngestSubject(partner), Data: data, Header: nats.Header{}}
	msg.Header.Set(wire.HdrCorrelationID, r.CorrelationID)
	sign(msg.Header, data)
	if file != "-" {
		msg.Header.Set(wire.HdrFilename, escape.Header(file))
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ack, err := j.PublishMsg(pctx, msg)
	if err != nil {
		r.Error = oneLine(err.Error())
		return r
	}
	r.OK, r.Stream, r.Seq = true, ack.Stream, ack.Sequence
	return r
}

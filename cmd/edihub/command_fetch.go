package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/edihub/edihub/client"
	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/hubclient"
	"github.com/edihub/edihub/wire"
)

func init() {
	register(command{name: "fetch", summary: "a stored message's payload, fetched from the claim-check bucket when it was stored aside", run: runFetch})
}

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
	m, err := client.Fetch(ctx, j, pos[0])
	if err != nil {
		return failedErr("fetch %s: %v", escape.Line(pos[0]), err)
	}
	payload, err := hubclient.PayloadOf(ctx, j, m.Header, m.Data)
	if err != nil {
		return failedErr("fetch %s: %v", escape.Line(pos[0]), err)
	}
	res := fetchResult{Message: wire.MsgRef{Stream: m.Stream, Seq: m.Sequence}.String(), Subject: m.Subject, Size: len(payload), Out: *out,
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

package forensics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/drill"
	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/parse"
	"github.com/edihub/edihub/sandbox"
	"github.com/edihub/edihub/ubl"
	"github.com/edihub/edihub/wire"
)

// The child's stdin is one line of JSON (the preamble: stage, headers,
// parse options), a newline, then the payload byte for byte. JSON never
// contains a raw newline, so the first one ends the preamble; the payload
// may hold anything. Headers travel this way rather than as arguments or
// environment variables because they quote hostile input (x-error-msg) and
// the child's environment is deliberately empty.
type preamble struct {
	V       int                 `json:"v"`
	Stage   string              `json:"stage"`
	Stream  string              `json:"stream"`
	Seq     uint64              `json:"seq"`
	Partner string              `json:"partner"`
	Headers map[string][]string `json:"headers"`
	EDIFACT *edifact.Options    `json:"edifact,omitempty"`
}

const preambleVersion = 1

// encodeChildInput builds what the child reads on stdin.
func encodeChildInput(p preamble, payload []byte) ([]byte, error) {
	p.V = preambleVersion
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode preamble: %w", err)
	}
	out := make([]byte, 0, len(b)+1+len(payload))
	return append(append(append(out, b...), '\n'), payload...), nil
}

func decodeChildInput(in []byte) (preamble, []byte, error) {
	var p preamble
	i := bytes.IndexByte(in, '\n')
	if i < 0 {
		return p, nil, errors.New("no preamble line on stdin: the child must be started by the forensics worker")
	}
	if err := json.Unmarshal(in[:i], &p); err != nil || p.V != preambleVersion {
		return p, nil, fmt.Errorf("bad preamble (version %d): %v", p.V, err)
	}
	return p, in[i+1:], nil
}

// progressEvery is how often the instrumented reader reports its position:
// often enough that the last report before a crash is close to the culprit,
// rare enough that a 100 000-segment INVOIC does not flood the pipe.
const progressEvery = 64

// childError carries the hub's classification across the process
// boundary: sandbox reads ErrorClass and ErrorCause from the chain.
type childError struct {
	class, cause string
	err          error
}

func (e *childError) Error() string      { return e.err.Error() }
func (e *childError) Unwrap() error      { return e.err }
func (e *childError) ErrorClass() string { return e.class }
func (e *childError) ErrorCause() string { return e.cause }

func classified(stage string, err error) error {
	f := hub.Classify(err, nil)
	return &childError{class: string(f.Class), cause: f.Cause, err: fmt.Errorf("stage %s: %w", stage, err)}
}

// Analyzer is what `edihub sandbox exec` runs in the child: the
// pipeline of the hub (stages in order; when none are given, the parse
// stage deciding with parse.Decide and the partner's parse options the
// hub resolved, as the hub's stage did — without partner agreements,
// which the child does not load) up to and including the stage that
// failed, instrumented. Before
// the stages it runs edifact.Guard and a segment-by-segment read that
// reports its position, so a crash or a cap shows how far the input got.
// A message with x-drill reproduces the drill: panic panics, hang spins on
// the CPU, exit kills the child with SIGKILL, error returns a permanent
// error — drills make realistic reports.
func Analyzer(cfg parse.Config, given ...hub.Stage) sandbox.Analyzer {
	return func(ctx context.Context, in []byte, progress func(sandbox.Progress)) (sandbox.Result, error) {
		p, payload, err := decodeChildInput(in)
		if err != nil {
			return sandbox.Result{}, &childError{class: "protocol", cause: wire.CauseUnknown, err: err}
		}
		opts := p.EDIFACT
		if opts == nil {
			opts = cfg.Options(p.Partner)
		}
		stages := given
		if len(stages) == 0 {
			stages = []hub.Stage{parse.New(cfg, &parse.Options{EDIFACT: opts})}
		}
		h := nats.Header(p.Headers)
		if kind := h.Get(wire.HdrDrill); kind != "" && h.Get(wire.HdrDrillMode) == "on" {
			progress(sandbox.Progress{Stage: "drill", Note: kind})
			if err := drill.Reproduce(kind); err != nil {
				return sandbox.Result{}, classified("drill", err)
			}
		}
		details := map[string]string{"stage": p.Stage, "payload_bytes": strconv.Itoa(len(payload))}
		upTo := len(stages)
		for i, st := range stages {
			if st.Name == p.Stage {
				upTo = i + 1
			}
		}
		if upTo == len(stages) && stages[len(stages)-1].Name != p.Stage {
			details["note"] = "stage " + p.Stage + " is not part of this binary's pipeline; every built-in stage was run instead"
		}
		var reached sandbox.Progress // where the read got; stages report from there
		for _, st := range stages[:upTo] {
			if st.Name != "parse" {
				continue
			}
			if reached, err = instrumentedRead(payload, opts, progress, details); err != nil {
				return sandbox.Result{}, classified("parse", err)
			}
		}
		m := &hub.Message{Subject: h.Get(wire.HdrOriginalTopic), Partner: p.Partner, Stream: p.Stream, Seq: p.Seq, Header: h, Data: payload}
		m.Partition, _ = strconv.Atoi(h.Get(wire.HdrPartition))
		for _, st := range stages[:upTo] {
			progress(sandbox.Progress{Segment: reached.Segment, Offset: reached.Offset, Stage: st.Name, Note: "running stage; the read reached this segment"})
			if err := st.Handle(ctx, m); err != nil {
				return sandbox.Result{}, classified(st.Name, err)
			}
		}
		details["outputs"] = strconv.Itoa(len(m.Outputs()))
		sum := fmt.Sprintf("stages %s ran to completion, %d outputs", stageList(stages[:upTo]), len(m.Outputs()))
		if n := details["segments"]; n != "" {
			sum = details["messages"] + " messages, " + n + " segments; " + sum
		}
		return sandbox.Result{Summary: sum, Details: details}, nil
	}
}

func stageList(st []hub.Stage) string {
	s := ""
	for i, x := range st {
		if i > 0 {
			s += ","
		}
		s += x.Name
	}
	return s
}

// instrumentedRead runs Guard and the streaming Reader with progress, then
// Parse (the envelope checks), so the last progress names the segment the
// parser was on.
func instrumentedRead(payload []byte, opts *edifact.Options, progress func(sandbox.Progress), details map[string]string) (sandbox.Progress, error) {
	if parse.LooksXML(payload) {
		return instrumentedUBL(payload, opts, progress, details)
	}
	var last sandbox.Progress
	progress(sandbox.Progress{Stage: "guard"})
	g, err := edifact.Guard(payload, opts)
	if err != nil {
		var ge *edifact.GuardError
		if errors.As(err, &ge) {
			progress(sandbox.Progress{Offset: ge.Offset, Stage: "guard", Note: "refused here"})
		}
		return last, err
	}
	details["standard"], details["syntax"] = g.Standard, g.Syntax
	r := edifact.NewReader(bytes.NewReader(g.Body))
	r.BaseOffset = g.Offset
	if opts.MaxSegmentLen > 0 {
		r.MaxSegmentLen = opts.MaxSegmentLen
	}
	if opts.MaxElementLen > 0 {
		r.MaxElementLen = opts.MaxElementLen
	}
	r.ReuseSegment = true
	n, msgs := 0, 0
	for {
		seg, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *edifact.ParseError
			if errors.As(err, &pe) {
				progress(sandbox.Progress{Segment: pe.Segment, Offset: pe.Offset, Stage: "read", Note: "error in " + pe.Tag})
			}
			return last, err
		}
		n++
		if seg.Tag == "UNH" || seg.Tag == "ST" {
			msgs++
		}
		last = sandbox.Progress{Segment: seg.Number, Offset: seg.Offset, Stage: "read", Note: seg.Tag}
		if n%progressEvery == 1 {
			progress(last)
		}
	}
	progress(last)
	details["segments"], details["messages"] = strconv.Itoa(n), strconv.Itoa(msgs)
	if _, err := edifact.Parse(payload, opts); err != nil {
		var pe *edifact.ParseError
		if errors.As(err, &pe) {
			progress(sandbox.Progress{Segment: pe.Segment, Offset: pe.Offset, Stage: "parse", Note: "error in " + pe.Tag})
		}
		return last, err
	}
	return last, nil
}

// instrumentedUBL is instrumentedRead for an XML payload (the stage decides
// it as UBL): the UBL guard, its refusal's offset as the progress.
func instrumentedUBL(payload []byte, opts *edifact.Options, progress func(sandbox.Progress), details map[string]string) (sandbox.Progress, error) {
	progress(sandbox.Progress{Stage: "guard"})
	g, err := ubl.Guard(payload, &ubl.Limits{MaxSize: opts.MaxSize})
	if err != nil {
		var ue *ubl.Error
		if errors.As(err, &ue) {
			progress(sandbox.Progress{Offset: ue.Offset, Stage: "guard", Note: "refused here: " + ue.Reason})
		}
		return sandbox.Progress{}, err
	}
	details["standard"], details["type"] = wire.StandardUBL, g.Type
	details["elements"], details["depth"] = strconv.Itoa(g.Elements), strconv.Itoa(g.MaxDepth)
	last := sandbox.Progress{Offset: int64(len(payload)), Stage: "guard", Note: g.Type}
	progress(last)
	return last, nil
}

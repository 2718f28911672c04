package parse_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/edihub/edihub/edifact"
	"github.com/edihub/edihub/parse"
)

// segmentAgreements accept everything and record how many segments each
// message came with; reads says what ReadsSegments answers.
type segmentAgreements struct {
	reads bool
	kept  []int
}

func (a *segmentAgreements) Admit(string, nats.Header, []byte, *edifact.Options) error { return nil }
func (a *segmentAgreements) Message(_ context.Context, _ string, em *edifact.Message, _ []byte) error {
	a.kept = append(a.kept, len(em.Segments))
	return nil
}
func (a *segmentAgreements) CheckInterchange(string, *edifact.Interchange) error { return nil }
func (a *segmentAgreements) Acks(string, string, string, []byte, *edifact.Document, error) []*nats.Msg {
	return nil
}
func (a *segmentAgreements) Decided(error, []*nats.Msg)        {}
func (a *segmentAgreements) ReadsSegments(partner string) bool { return a.reads }

// agreementsOnly hides ReadsSegments: agreements that do not say.
type agreementsOnly struct{ parse.Agreements }

// A large interchange's outputs are the same bytes whether its messages
// are rendered while read (no agreements, or agreements that read no
// segment) or from their kept segments (agreements that read them, or do
// not say), and the agreements that read segments get them all.
func TestStreamedViewsAreTheViews(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("UNB+UNOA:3+SENDER:14+RECEIVER:14+261130:1200+BIG1'")
	const msgs, lines = 2, 12000 // over 64 KiB, each message over 2 048 segments
	for k := 1; k <= msgs; k++ {
		fmt.Fprintf(&b, "UNH+%d+INVOIC:D:96A:UN'BGM+380+1+9'", k)
		for range lines {
			b.WriteString("LIN+1++4000862141404:SRS'")
		}
		fmt.Fprintf(&b, "UNT+%d+%d'", lines+3, k)
	}
	fmt.Fprintf(&b, "UNZ+%d+BIG1'", msgs)
	data := b.Bytes()
	doc, err := edifact.Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for _, m := range doc.Messages() {
		v, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
	}
	reads, streams, silent := &segmentAgreements{reads: true}, &segmentAgreements{}, &segmentAgreements{}
	for name, c := range map[string]struct {
		ags  parse.Agreements
		rec  *segmentAgreements // nil: no agreements
		kept int                // segments each message comes with to the agreements
	}{
		"no agreements":              {nil, nil, 0},
		"agreements reading none":    {streams, streams, 0},
		"agreements reading them":    {reads, reads, lines + 3},
		"agreements that do not say": {agreementsOnly{silent}, silent, lines + 3},
	} {
		in := &parse.Input{Partner: "ACME", Stream: "INGEST", Seq: 1, Header: nats.Header{}, Data: data}
		d := parse.Decide(context.Background(), in, parse.With{Agreements: c.ags})
		if d.Err != nil {
			t.Fatalf("%s: %v", name, d.Err)
		}
		if len(d.Outputs) != msgs {
			t.Fatalf("%s: %d outputs, want %d", name, len(d.Outputs), msgs)
		}
		for i, o := range d.Outputs {
			if !bytes.Equal(o.Data, want[i]) {
				t.Errorf("%s: output %d differs from MarshalJSON (%d and %d bytes)", name, i, len(o.Data), len(want[i]))
			}
		}
		if a := c.rec; a != nil {
			if len(a.kept) != msgs {
				t.Errorf("%s: the agreements were asked about %d messages, want %d", name, len(a.kept), msgs)
			}
			for i, k := range a.kept {
				if k != c.kept {
					t.Errorf("%s: message %d came with %d segments, want %d", name, i+1, k, c.kept)
				}
			}
		}
	}
}

package edifact

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// bigEDIFACT is head (UNA and UNB) and msgs messages, each n copies of seg
// (one segment or more) after a BGM, and the UNZ.
func bigEDIFACT(head string, msgs int, n int, seg string) []byte {
	var b bytes.Buffer
	b.WriteString(head)
	for k := 1; k <= msgs; k++ {
		fmt.Fprintf(&b, "UNH+%d+INVOIC:D:96A:UN'BGM+380+1+9'", k)
		for range n {
			b.WriteString(seg)
		}
		fmt.Fprintf(&b, "UNT+%d+%d'", n*(strings.Count(seg, "'")-strings.Count(seg, "?'"))+3, k)
	}
	fmt.Fprintf(&b, "UNZ+%d+BIG'", msgs)
	return b.Bytes()
}

// bigX12 is one 810 of n IT1 segments.
func bigX12(n int) []byte {
	var b bytes.Buffer
	b.WriteString("ISA*00*          *00*          *ZZ*SENDER         *ZZ*RECEIVER       *261130*1200*U*00401*000000001*0*T*>~")
	b.WriteString("GS*IN*SENDER*RECEIVER*20261130*1200*1*X*004010~ST*810*0001~BIG*20261130*INV1~")
	for range n {
		b.WriteString("IT1*1*2*EA*9.5~")
	}
	fmt.Fprintf(&b, "SE*%d*0001~GE*1*1~IEA*1*000000001~", n+3)
	return b.Bytes()
}

// WalkViews gives every message the view MessageJSON gives the same
// message from Walk: small messages with their segments and no view (the
// caller renders them), large ones rendered while read, with no segments,
// the same bytes (plain, escaped, non-ASCII values and head, repeated
// elements, several large messages, X12), in a buffer within an eighth of
// its size.
func TestWalkViewsIsMessageJSON(t *testing.T) {
	const unoc = "UNA:+.? 'UNB+UNOC:3+S:14+R:14+261130:1200+BIG'"
	inputs := map[string][]byte{
		"tiny":          bigEDIFACT(unoc, 1, 3*sizedFrom, "LIN+1'"),
		"at the switch": bigEDIFACT(unoc, 1, sizedFrom-2, "LIN+1'"),
		"past it":       bigEDIFACT(unoc, 1, sizedFrom-1, "LIN+1'"),
		"three large":   bigEDIFACT(unoc, 3, sizedFrom+100, "LIN+1++4000862141404:SRS'"),
		"large after small": []byte(unoc + "UNH+0+INVOIC:D:96A:UN'UNT+2+0'" +
			strings.Replace(strings.TrimPrefix(string(bigEDIFACT(unoc, 1, sizedFrom+10, "LIN+1'")), unoc), "UNZ+1", "UNZ+2", 1)),
		"escapes": bigEDIFACT(unoc, 1, sizedFrom+10, `FTX+AAA+++a "quoted" \back\slash?'s <b>&amp;'`),
		"latin1":  bigEDIFACT(unoc, 1, sizedFrom+10, "LIN+1'FTX+AAA+++M\xfcller'"),
		"latin1 head": bigEDIFACT("UNA:+.? 'UNB+UNOC:3+S\xe9:14+R:14+261130:1200+BIG'", 1, sizedFrom+10,
			"LIN+1'"),
		"repetition": bigEDIFACT("UNA:+.?*'UNB+UNOC:4+S+R+20261130:1200+BIG'", 1, sizedFrom+10, "LIN+1'ATT+2++M*F'"),
		"x12":        bigX12(3 * sizedFrom),
	}
	// a large message whose UNT is far from the input's end (the estimate)
	inputs["small after large"] = bigEDIFACT(unoc, 1, sizedFrom+10, "LIN+1'")
	inputs["small after large"] = append(inputs["small after large"][:len(inputs["small after large"])-len("UNZ+1+BIG'")],
		[]byte("UNH+2+INVOIC:D:96A:UN'BGM+380+1+9'UNT+3+2'UNZ+2+BIG'")...)
	for name, data := range inputs {
		var want [][]byte
		var wantCounts []int
		if _, err := Walk(data, &Options{Lenient: true}, func(m *Message) error {
			v, err := m.MarshalJSON()
			want, wantCounts = append(want, v), append(wantCounts, len(m.Segments))
			return err
		}); err != nil {
			t.Fatalf("%s: Walk: %v", name, err)
		}
		n := 0
		_, err := WalkViews(data, &Options{Lenient: true}, func(m *Message, view []byte) error {
			n++
			if n > len(want) {
				return fmt.Errorf("message %d: Walk had %d", n, len(want))
			}
			count := wantCounts[n-1]
			if m.SegmentCount() != count {
				t.Errorf("%s message %d: SegmentCount %d, Walk's message had %d", name, n, m.SegmentCount(), count)
			}
			switch {
			case count <= sizedFrom:
				if view != nil || len(m.Segments) != count {
					t.Errorf("%s message %d: %d segments: view %d bytes, %d segments kept; want none and all", name, n, count, len(view), len(m.Segments))
				}
				var err error
				if view, err = MessageJSON(m); err != nil {
					return err
				}
			case view == nil || len(m.Segments) != 0:
				t.Errorf("%s message %d: %d segments: view %d bytes, %d segments kept; want the view and none", name, n, count, len(view), len(m.Segments))
				return nil
			case cap(view)-len(view) > len(view)/8:
				t.Errorf("%s message %d: %d bytes kept for a view of %d", name, n, cap(view), len(view))
			}
			if !bytes.Equal(view, want[n-1]) {
				t.Errorf("%s message %d: the view differs from MarshalJSON (%d and %d bytes):\n got %.300s\nwant %.300s", name, n, len(view), len(want[n-1]), view, want[n-1])
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: WalkViews: %v", name, err)
		}
		if n != len(want) {
			t.Errorf("%s: %d messages, Walk had %d", name, n, len(want))
		}
	}
}

// A large message rendered while read is checked like any: a wrong count
// or a missing trailer is the error Walk gives, and the callback's error
// stops the walk.
func TestWalkViewsChecksLargeMessages(t *testing.T) {
	const unoc = "UNA:+.? 'UNB+UNOC:3+S:14+R:14+261130:1200+BIG'"
	good := bigEDIFACT(unoc, 1, 2*sizedFrom, "LIN+1'")
	for name, data := range map[string][]byte{
		"count":   []byte(strings.Replace(string(good), "UNT+"+strconv.Itoa(2*sizedFrom+3), "UNT+7", 1)),
		"no UNT":  []byte(strings.Replace(string(good), "UNT+"+strconv.Itoa(2*sizedFrom+3)+"+1'", "", 1)),
		"no UNZ":  good[:len(good)-len("UNZ+1+BIG'")],
		"new UNH": []byte(strings.Replace(string(good), "UNT+"+strconv.Itoa(2*sizedFrom+3)+"+1'", "UNH+2+INVOIC:D:96A:UN'", 1)),
	} {
		_, want := Walk(data, nil, func(*Message) error { return nil })
		_, got := WalkViews(data, nil, func(*Message, []byte) error { return nil })
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: WalkViews: %v; Walk: %v", name, got, want)
		}
	}
	stop := errors.New("stop")
	if _, err := WalkViews(good, nil, func(*Message, []byte) error { return stop }); err != stop {
		t.Errorf("the callback's error: got %v", err)
	}
}

// EachSegment gives a message rendered while read the segments Walk keeps
// for it (values, repeats, offsets, lines, columns, numbers), read again
// from the input during the callback; after it, an error.
func TestEachSegmentReadsTheSegmentsAgain(t *testing.T) {
	const unoc = "UNA:+.? 'UNB+UNOC:3+S:14+R:14+261130:1200+BIG'"
	inputs := map[string][]byte{
		"lines":      bigEDIFACT(unoc+"\r\n", 2, sizedFrom+10, "LIN+1++4000862141404:SRS'\nFTX+AAA+++a?'b?:c'\r\n"),
		"repetition": bigEDIFACT("UNA:+.?*'UNB+UNOC:4+S+R+20261130:1200+BIG'", 1, sizedFrom+10, "LIN+1'ATT+2++M*F*G'"),
		"x12":        bigX12(sizedFrom + 10),
	}
	for name, data := range inputs {
		var want [][]Segment
		if _, err := Walk(data, nil, func(m *Message) error {
			segs := make([]Segment, len(m.Segments))
			for i := range m.Segments {
				segs[i] = m.Segments[i].Clone()
			}
			want = append(want, segs)
			return nil
		}); err != nil {
			t.Fatalf("%s: Walk: %v", name, err)
		}
		var kept []*Message
		_, err := WalkViews(data, nil, func(m *Message, _ []byte) error {
			kept = append(kept, m)
			w := want[len(kept)-1]
			i := 0
			err := m.EachSegment(func(s *Segment) error {
				if i >= len(w) {
					return fmt.Errorf("segment %d: Walk had %d", i+1, len(w))
				}
				if got := fmt.Sprintf("%+v", *s); got != fmt.Sprintf("%+v", w[i]) {
					t.Errorf("%s message %d segment %d:\n got %s\nwant %+v", name, len(kept), i+1, got, w[i])
				}
				i++
				return nil
			})
			if i != len(w) {
				t.Errorf("%s message %d: %d segments, Walk had %d", name, len(kept), i, len(w))
			}
			return err
		})
		if err != nil {
			t.Fatalf("%s: WalkViews: %v", name, err)
		}
		for _, m := range kept {
			if m.SegmentCount() > sizedFrom && m.EachSegment(func(*Segment) error { return nil }) == nil {
				t.Errorf("%s: EachSegment after the callback gave no error", name)
			}
		}
	}
}

package partner

import (
	"bytes"
	"strings"

	"github.com/edihub/edihub/edifact"
)

// x12Group is a functional group as a scan of the input found it: its
// header, the transaction sets whose ST it holds, and the GE01 it sent.
type x12Group struct {
	g    *edifact.Group
	sets []x12Set
	ge01 string // "" when no GE was read
}

type x12Set struct{ typ, ref, impl string }

// scanX12 reads the X12 input once, segment by segment (the Reader's
// bounds), and returns the groups of the interchange with control number
// icRef, so that an acknowledgement can answer every group of it, also
// those after a fault and those the walk never reached. It stops at the
// first segment the Reader cannot read.
func scanX12(data []byte, icRef string) []*x12Group {
	rd := edifact.NewReader(bytes.NewReader(data))
	rd.MaxSegmentLen, rd.MaxElementLen = 64<<10, 4<<10
	var out []*x12Group
	var cur *x12Group
	in := false
	for {
		s, err := rd.Read()
		if err != nil {
			return out
		}
		switch s.Tag {
		case "ISA":
			if in && len(out) > 0 {
				return out // the next interchange
			}
			in = strings.TrimSpace(s.Value(13, 1)) == icRef
		case "GS":
			if in {
				cur = &x12Group{g: &edifact.Group{ID: s.Value(1, 1), Sender: edifact.Party{ID: s.Value(2, 1)},
					Recipient: edifact.Party{ID: s.Value(3, 1)}, ControlRef: s.Value(6, 1), Agency: s.Value(7, 1), Version: s.Value(8, 1)}}
				out = append(out, cur)
			}
		case "ST":
			if in && cur != nil {
				cur.sets = append(cur.sets, x12Set{typ: s.Value(1, 1), ref: s.Value(2, 1), impl: s.Value(3, 1)})
			}
		case "GE":
			if in && cur != nil {
				cur.ge01, cur = s.Value(1, 1), nil
			}
		case "IEA":
			if in {
				return out
			}
		}
	}
}

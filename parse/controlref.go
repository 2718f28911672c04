package parse

import (
	"bytes"

	"github.com/edihub/edihub/edifact"
)

// ControlRef reads only the interchange header of a payload (UNB or ISA)
// to name the interchange on a copy the hub makes before or without the
// stage reading it (hub.Stage.ControlRef). It reads at most two segments of
// bounded size, so a hostile payload cannot make it expensive.
func ControlRef(data []byte) string {
	r := edifact.NewReader(bytes.NewReader(data))
	r.MaxSegmentLen = 4096
	r.MaxElementLen = 512
	for i := 0; i < 2; i++ {
		seg, err := r.Read()
		if err != nil {
			return ""
		}
		switch seg.Tag {
		case "UNB":
			return seg.Value(5, 1)
		case "ISA":
			return seg.Value(13, 1)
		}
	}
	return ""
}

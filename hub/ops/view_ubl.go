package ops

import (
	"bytes"
	"strings"

	"github.com/edihub/edihub/escape"
	"github.com/edihub/edihub/ubl"
	"github.com/edihub/edihub/wire"
)

// ublSegments is Segments for an XML payload: a UBL document one element a
// line (ubl.Document.WriteOutline: line:column, XPath, value, attributes,
// and "<- RULE" on the elements the default validation finds failing), N
// the element's number, Offset its start tag's, Tag its name. A document
// the guard or the parser refuses is shown as Error (the reason with its
// position) and the escaped bytes from the line it failed on.
func ublSegments(data []byte, maxLines, maxRest int) SegmentView {
	v := SegmentView{Standard: wire.StandardUBL}
	doc, err := ubl.ParseBytes(data, nil)
	if err != nil {
		v.Error = escape.Text(err.Error())
		if ue, ok := err.(*ubl.Error); ok && ue.Offset > 0 && ue.Offset <= int64(len(data)) {
			v.RestAt = int64(bytes.LastIndexByte(data[:ue.Offset], '\n') + 1)
		}
		v.Rest = restOf(data, v.RestAt, maxRest, &v)
		return v
	}
	findings := doc.Validate(nil)
	var out bytes.Buffer
	if err := doc.WriteOutline(&out, findings); err != nil {
		v.Error = escape.Text(err.Error())
		return v
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	i := 0
	doc.Root.Walk(func(e *ubl.Element) {
		if i >= len(lines) || maxLines > 0 && len(v.Lines) >= maxLines {
			v.Truncated = v.Truncated || i < len(lines)
			i++
			return
		}
		v.Lines = append(v.Lines, SegmentLine{N: i + 1, Offset: e.Offset, Tag: escape.Line(e.Name), Text: lines[i]})
		i++
	})
	for _, f := range findings {
		if f.Severity == ubl.Fatal {
			v.Error = escape.Text("fails " + f.String())
			break
		}
	}
	return v
}

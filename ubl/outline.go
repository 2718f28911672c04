package ubl

import (
	"fmt"
	"io"
	"strings"

	"github.com/edihub/edihub/escape"
)

// WriteOutline prints the document one element a line, for an operator
// (dlq show): line:column, the XPath, the value (bounded, escaped for a
// terminal), and after "<-" the rule ids of the findings on that element.
// Attributes follow the value as @name=value.
func (d *Document) WriteOutline(w io.Writer, findings []Finding) error {
	marks := map[string][]string{}
	for _, f := range findings {
		marks[f.XPath] = append(marks[f.XPath], f.Rule)
	}
	var err error
	d.Root.Walk(func(e *Element) {
		if err != nil {
			return
		}
		xp := e.XPath()
		var sb strings.Builder
		fmt.Fprintf(&sb, "%5d:%-4d %s", e.Line, e.Column, escape.Readable(xp))
		if v := e.Value(); v != "" {
			sb.WriteString(" = " + escape.Readable(clip(v, 80)))
		}
		for _, a := range e.Attrs {
			sb.WriteString(" @" + escape.Readable(a.Name) + "=" + escape.Readable(clip(a.Value, 40)))
		}
		if rules := marks[xp]; len(rules) > 0 {
			sb.WriteString("  <- " + strings.Join(rules, " "))
		}
		sb.WriteByte('\n')
		_, err = io.WriteString(w, sb.String())
	})
	return err
}
